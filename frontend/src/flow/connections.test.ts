// The connection rule's shared cases (connection-cases.json), run against the editor's
// checkConnection. The engine's pytest (tests/graph/test_connection_cases.py) runs the
// same file against src/nodeloom/graph, and checks the file's catalogue is the engine's.

import { describe, expect, it } from 'vitest'
import type { Catalogue, NodeDefinition, Parameter, Port } from '../api/models'
import cases from './connection-cases.json'
import { canConnectSockets, checkConnection, socketRefusal } from './connections'
import { flowNode } from './testCatalogue'
import type { FlowEdge, Wire } from './types'

interface CasePort { id: string; socket: string; multiple: boolean; repeat?: string }
interface CaseNode {
  id: string
  execution_mode: NodeDefinition['execution_mode']
  inputs: CasePort[]
  outputs: CasePort[]
  parameters: { id: string; type: Parameter['type']; hybrid: boolean; socket?: string }[]
}
interface WireCase {
  it: string
  edges?: string[]
  wire: string
  ok: boolean
  code?: string
  reason?: string
  ui_reason?: string
  only?: 'ui' | 'engine'
}
interface CasesFile {
  catalogue: { nodes: CaseNode[]; socket_types: { id: string; structural: boolean }[]; coercions: { from: string; to: string }[] }
  sockets: [string, string, boolean][]
  refusals: [string, string, string][]
  nodes: { id: string; type: string; data?: Record<string, unknown> }[]
  wires: WireCase[]
}

const file = cases as unknown as CasesFile // JSON imports are typed wider than the file is

const port = (p: CasePort): Port => ({ label: p.id, required: false, ...p })

/** The served catalogue, filled out from the part of it the rule reads. */
const catalogue: Catalogue = {
  nodes: file.catalogue.nodes.map((n) => ({
    id: n.id, name: n.id, category: 'flow', description: '', icon: 'Box',
    execution_mode: n.execution_mode,
    inputs: n.inputs.map(port),
    outputs: n.outputs.map(port),
    main_output: n.outputs[0]?.id ?? 'output',
    parameters: n.parameters.map((p) => ({ label: p.id, default: null, required: false, ...p })),
    side_effects: 'pure', streaming: false, trigger: false, interactive: false, output_shape: null,
  })),
  common_parameters: [],
  socket_types: file.catalogue.socket_types.map((s) => ({ ...s, color: '#888', shape: 'circle', description: '' })),
  coercions: file.catalogue.coercions,
  failures: [],
}

const nodes = file.nodes.map((n) => flowNode(n.id, n.type, n.data ?? {}))

const WIRE = /^(?:([\w-]+): )?([\w-]+)\.([\w-]+) -> ([\w-]+)\.([\w-]+)$/

function wireOf(text: string): Wire & { id: string } {
  const match = WIRE.exec(text)
  if (!match) throw new Error(`a wire is written 'id: source.handle -> target.handle', got '${text}'`)
  const [, id, source, sourceHandle, target, targetHandle] = match
  return { id: id ?? 'new', source, sourceHandle, target, targetHandle }
}

describe('canConnectSockets (sockets.can_connect)', () => {
  it.each(file.sockets)('%s -> %s connects: %s', (source, target, expected) => {
    expect(canConnectSockets(catalogue, source, target)).toBe(expected)
  })

  it.each(file.refusals)('a refused %s -> %s says what it connects to', (source, target, pattern) => {
    expect(socketRefusal(catalogue, source, target)).toMatch(new RegExp(pattern))
  })
})

describe('checkConnection (validation._check_edges, structure.find_structure)', () => {
  const applies = file.wires.filter((c) => c.only !== 'engine')

  it.each(applies.map((c) => [c.it, c] as const))('%s', (_, c) => {
    const edges: FlowEdge[] = (c.edges ?? []).map(wireOf)
    const result = checkConnection(catalogue, nodes, edges, wireOf(c.wire))
    if (c.ok) {
      expect(result).toEqual({ ok: true })
      return
    }
    expect(result.ok).toBe(false)
    const reason = result.ok ? '' : result.reason
    expect(reason).toMatch(new RegExp(c.reason ?? ''))
    if (c.ui_reason) expect(reason).toMatch(new RegExp(c.ui_reason))
  })

  it('reads every case of the shared file', () => {
    expect(applies.length).toBeGreaterThanOrEqual(25)
    expect(file.wires.filter((c) => c.ok).length).toBeGreaterThan(5)
  })

  it('ignores the edge being reconnected', () => {
    const edges = [wireOf('e1: start.output -> tpl.input')]
    expect(checkConnection(catalogue, nodes, edges, wireOf('tpl2.output -> tpl.input'), 'e1')).toEqual({ ok: true })
  })
})
