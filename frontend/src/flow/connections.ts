// The one connection rule of the canvas (React Flow's isValidConnection and onConnect both
// call checkConnection). It is the engine's rule, src/nodeloom/graph/sockets.py (can_connect,
// connection_refusal), edge_checks.py (check_edges) and structure.py, run before the wire
// exists; connection-cases.json holds its cases, which this suite and the engine's pytest
// (tests/graph/test_connection_cases.py) both run, so the two cannot drift apart.

import type { Catalogue } from '../api/models'
import { definitionFor, inputPorts, outputPorts } from './ports'
import { displayName, type FlowEdge, type FlowNode, type Wire } from './types'

export type ConnectionCheck = { ok: true } | { ok: false; reason: string }

function coercionSet(catalogue: Catalogue): Set<string> {
  return new Set(catalogue.coercions.map((c) => `${c.from}>${c.to}`))
}

function structuralSet(catalogue: Catalogue): Set<string> {
  return new Set(catalogue.socket_types.filter((s) => s.structural).map((s) => s.id))
}

/** Whether a `source`-typed port may feed a `target`-typed one (sockets.can_connect). */
export function canConnectSockets(catalogue: Catalogue, source: string, target: string): boolean {
  if (source === target) return true
  const coercions = coercionSet(catalogue)
  const structural = structuralSet(catalogue)
  if (structural.has(source) || structural.has(target)) return coercions.has(`${source}>${target}`)
  if (source === 'any' || target === 'any' || source === 'data' || target === 'data') return true
  return coercions.has(`${source}>${target}`)
}

/** Why two sockets cannot connect (sockets.connection_refusal). */
export function socketRefusal(catalogue: Catalogue, source: string, target: string): string {
  const allowed = catalogue.coercions
    .filter((c) => c.from === source)
    .map((c) => c.to)
    .sort()
  const structural = structuralSet(catalogue).has(source)
  const targets = structural ? [source, ...allowed] : [source, ...allowed, 'any']
  return (
    `a '${source}' socket cannot connect to a '${target}' socket; '${source}' connects to: ` +
    `${targets.join(', ')}. Use a Type Converter node for other conversions`
  )
}

function nameOf(node: FlowNode): string {
  return displayName(node.id, node.data.values)
}

/**
 * Whether `wire` may be added to the graph, and if not why. `ignoreEdge` is an edge being
 * reconnected (it does not count as already occupying its target).
 */
export function checkConnection(
  catalogue: Catalogue,
  nodes: readonly FlowNode[],
  edges: readonly FlowEdge[],
  wire: Wire,
  ignoreEdge?: string,
): ConnectionCheck {
  const source = nodes.find((n) => n.id === wire.source)
  const target = nodes.find((n) => n.id === wire.target)
  if (!source || !target) return { ok: false, reason: 'Both ends must be nodes of this graph' }
  const sourceHandle = wire.sourceHandle ?? 'output'
  const targetHandle = wire.targetHandle ?? 'input'
  if (source.id === target.id && target.data.values.activation !== 'each') {
    return {
      ok: false,
      reason: `'${nameOf(source)}' cannot connect to itself (only a node whose activation is 'each' may)`,
    }
  }
  const sourceDef = definitionFor(catalogue, source.data.kind)
  const targetDef = definitionFor(catalogue, target.data.kind)
  if (!sourceDef || !targetDef) return { ok: false, reason: 'Unknown node type' }
  const outputs = outputPorts(sourceDef, source.data.values)
  const outPort = outputs.find((p) => p.id === sourceHandle)
  if (!outPort) {
    return {
      ok: false,
      reason: `'${nameOf(source)}' has no output port '${sourceHandle}'; valid output ports: ${
        outputs.map((p) => p.id).join(', ') || 'none'
      }`,
    }
  }
  const inputs = inputPorts(targetDef)
  const inPort = inputs.find((p) => p.id === targetHandle)
  if (!inPort) {
    return {
      ok: false,
      reason: `'${nameOf(target)}' has no input port '${targetHandle}'; valid input ports: ${
        inputs.map((p) => p.id).join(', ') || 'none'
      }`,
    }
  }
  if (!canConnectSockets(catalogue, outPort.socket, inPort.socket)) {
    return {
      ok: false,
      reason: `'${nameOf(source)}'.${outPort.id} -> '${nameOf(target)}'.${inPort.id}: ${socketRefusal(
        catalogue,
        outPort.socket,
        inPort.socket,
      )}`,
    }
  }
  const incoming = edges.filter(
    (e) => e.id !== ignoreEdge && e.target === target.id && (e.targetHandle ?? 'input') === targetHandle,
  )
  if (incoming.some((e) => e.source === source.id && (e.sourceHandle ?? 'output') === sourceHandle)) {
    return { ok: false, reason: 'These two ports are already connected' }
  }
  if (incoming.length > 0 && !inPort.multiple && target.data.values.activation !== 'each') {
    return {
      ok: false,
      reason:
        `port '${inPort.id}' of '${nameOf(target)}' already has an incoming edge ('${incoming[0].id}'); ` +
        'only ports that accept many (Merge) take several: put a Merge node in front',
    }
  }
  return structureCheck(catalogue, nodes, edges, { source, target, targetSocket: inPort.socket })
}

const BUILD_MODES = new Set(['structural', 'hybrid'])

/**
 * The structural rules of src/nodeloom/graph/structure.py, for the graph with the new wire:
 * a node wired into an agent's tools (or structural by definition) sits on no spine edge
 * (structural_on_spine), a sub-agent has one parent (multiple_parents), and a structural
 * node's side sockets take wires only from nodes built before the flow (structural_wire).
 */
function structureCheck(
  catalogue: Catalogue,
  nodes: readonly FlowNode[],
  edges: readonly FlowEdge[],
  wire: { source: FlowNode; target: FlowNode; targetSocket: string },
): ConnectionCheck {
  const structural = structuralSet(catalogue)
  const byId = new Map(nodes.map((n) => [n.id, n]))
  const definitionOf = (id: string) => {
    const node = byId.get(id)
    return node ? definitionFor(catalogue, node.data.kind) : undefined
  }
  const targetSocket = (edge: FlowEdge) => {
    const definition = definitionOf(edge.target)
    const handle = edge.targetHandle ?? 'input'
    return definition ? inputPorts(definition).find((p) => p.id === handle)?.socket : undefined
  }
  const roles = new Set(nodes.filter((n) => definitionFor(catalogue, n.data.kind)?.execution_mode === 'structural').map((n) => n.id))
  for (const edge of edges) if (structural.has(targetSocket(edge) ?? '')) roles.add(edge.source)
  const source = wire.source.id
  const target = wire.target.id
  const sourceDef = definitionOf(source)
  if (structural.has(wire.targetSocket)) {
    const spine = edges.find((e) => (e.source === source || e.target === source) && targetSocket(e) === 'data')
    if (spine) {
      return {
        ok: false,
        reason: `'${nameOf(wire.source)}' is on the data spine (edge '${spine.id}'); a node wired into an agent's tools is compiled into that agent and cannot also sit on the spine`,
      }
    }
    const isAgent = sourceDef?.outputs.some((p) => p.socket === 'agent') ?? false
    const parent = edges.find((e) => e.source === source && structural.has(targetSocket(e) ?? ''))
    if (isAgent && parent) {
      return {
        ok: false,
        reason: `sub-agent '${nameOf(wire.source)}' is already wired into the tools of '${parent.target}'; a sub-agent has one parent (duplicate the node for another parent)`,
      }
    }
    return { ok: true }
  }
  if (wire.targetSocket === 'data') {
    const role = roles.has(target) ? wire.target : roles.has(source) ? wire.source : null
    if (role) {
      return {
        ok: false,
        reason: `'${nameOf(role)}' is wired into an agent's tools (or is a tool by definition), so it is compiled into that agent and cannot also sit on the data spine`,
      }
    }
  } else if (roles.has(target) && sourceDef && !BUILD_MODES.has(sourceDef.execution_mode)) {
    return {
      ok: false,
      reason: `'${nameOf(wire.target)}' is compiled before the flow runs, so its side socket cannot come from '${nameOf(wire.source)}', which only has a value during the flow; use a Model Selector or an inline value`,
    }
  }
  return { ok: true }
}

/** The socket type of a handle, for colouring wires. */
export function socketOfHandle(
  catalogue: Catalogue,
  node: FlowNode | undefined,
  handle: string | null | undefined,
  side: 'source' | 'target',
): string {
  if (!node) return 'data'
  const definition = definitionFor(catalogue, node.data.kind)
  if (!definition) return 'data'
  const ports = side === 'source' ? outputPorts(definition, node.data.values) : inputPorts(definition)
  const id = handle ?? (side === 'source' ? 'output' : 'input')
  return ports.find((p) => p.id === id)?.socket ?? 'data'
}
