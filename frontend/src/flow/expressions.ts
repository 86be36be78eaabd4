// Expression autocomplete (docs/expressions.md): inside `{{ ... }}` offer $json, the
// fields of upstream nodes' outputs, $vars and $credentials. Pure functions, no React.

import type { Catalogue, NodeDefinition } from '../api/models'
import { definitionFor, mainOutput } from './ports'
import { displayName, type FlowEdge, type FlowNode } from './types'

export interface Completion {
  /** The full text that replaces the token. */
  label: string
  detail?: string
}

export interface CompletionResult {
  /** Replace text[from, to) with the chosen label. */
  from: number
  to: number
  options: Completion[]
}

export interface UpstreamNode {
  name: string
  fields: string[]
  /** A direct parent on the spine: its fields are also `$json.<field>`. */
  direct: boolean
}

export interface ExpressionContext {
  upstream: UpstreamNode[]
  variables: string[]
  credentials: string[]
  inLoop: boolean
}

/** Field names declared by a definition for its main output: `output_shape`'s keys and the
 * `{a, "b": ...}` list opening the main port's description. */
export function outputFields(definition: NodeDefinition): string[] {
  const fields = new Set<string>()
  const shape = definition.output_shape
  if (shape && typeof shape === 'object' && !Array.isArray(shape)) {
    for (const key of Object.keys(shape)) fields.add(key)
  }
  const main = definition.outputs.find((p) => p.id === mainOutput(definition))
  const description = main?.description ?? ''
  const open = description.indexOf('{')
  if (open >= 0 && open < 3) {
    let depth = 0
    let end = -1
    for (let i = open; i < description.length; i++) {
      if (description[i] === '{') depth++
      else if (description[i] === '}' && --depth === 0) {
        end = i
        break
      }
    }
    if (end > open) {
      const inner = description.slice(open + 1, end)
      let part = ''
      depth = 0
      const parts: string[] = []
      for (const ch of inner) {
        if ('{[<'.includes(ch)) depth++
        if ('}]>'.includes(ch)) depth--
        if (ch === ',' && depth === 0) {
          parts.push(part)
          part = ''
        } else part += ch
      }
      parts.push(part)
      for (const p of parts) {
        const match = /^\s*"?([A-Za-z_]\w*)"?\s*(?::|$)/.exec(p)
        if (match) fields.add(match[1])
      }
    }
  }
  return [...fields]
}

function nodeName(node: FlowNode): string {
  return displayName(node.id, node.data.values)
}

/** Nodes with a path to `nodeId`, nearest first; spine parents marked `direct`. */
export function upstreamNodes(
  catalogue: Catalogue,
  nodes: readonly FlowNode[],
  edges: readonly FlowEdge[],
  nodeId: string,
): UpstreamNode[] {
  const byId = new Map(nodes.map((n) => [n.id, n]))
  const parents = new Map<string, FlowEdge[]>()
  for (const edge of edges) {
    const list = parents.get(edge.target)
    if (list) list.push(edge)
    else parents.set(edge.target, [edge])
  }
  const direct = new Set(
    (parents.get(nodeId) ?? []).filter((e) => (e.targetHandle ?? 'input') === 'input').map((e) => e.source),
  )
  const seen = new Set<string>([nodeId])
  const order: string[] = []
  let frontier = [nodeId]
  while (frontier.length) {
    const next: string[] = []
    for (const id of frontier) {
      for (const edge of parents.get(id) ?? []) {
        if (!seen.has(edge.source)) {
          seen.add(edge.source)
          order.push(edge.source)
          next.push(edge.source)
        }
      }
    }
    frontier = next
  }
  const result: UpstreamNode[] = []
  for (const id of order) {
    const node = byId.get(id)
    if (!node) continue
    const definition = definitionFor(catalogue, node.data.kind)
    if (definition?.execution_mode === 'structural') continue // built, never run: no output
    result.push({ name: nodeName(node), fields: definition ? outputFields(definition) : [], direct: direct.has(id) })
  }
  return result
}

function quote(name: string): string {
  return name.includes("'") ? `"${name}"` : `'${name}'`
}

/** Every expression the context offers. */
export function candidates(context: ExpressionContext): Completion[] {
  const out: Completion[] = [{ label: '$json', detail: "this node's input" }]
  const jsonFields = new Set<string>()
  for (const node of context.upstream) if (node.direct) node.fields.forEach((f) => jsonFields.add(f))
  for (const field of jsonFields) out.push({ label: `$json.${field}`, detail: 'input field' })
  for (const node of context.upstream) {
    const base = `$(${quote(node.name)}).item.json`
    out.push({ label: base, detail: `${node.name}'s output` })
    for (const field of node.fields) out.push({ label: `${base}.${field}`, detail: node.name })
  }
  out.push({ label: '$vars.', detail: 'run variables' })
  for (const name of context.variables) out.push({ label: `$vars.${name}`, detail: 'variable' })
  out.push({ label: '$credentials.', detail: 'stored credentials' })
  for (const name of context.credentials) out.push({ label: `$credentials.${name}`, detail: 'credential' })
  if (context.inLoop) {
    out.push({ label: '$loop.index', detail: 'iteration, from 0' })
    out.push({ label: '$loop.item', detail: 'current item' })
    out.push({ label: '$loop.total', detail: 'forEach: item count' })
  }
  return out
}

// The expression token being typed at the end of the text before the cursor.
const TOKEN = /\$(?:\(\s*(?:'[^']*'?|"[^"]*"?)?\s*\)?)?[\w.]*$|\$$/

/**
 * Completions at `cursor` in `text`, or null when the cursor is not inside `{{ }}` or
 * nothing fits. Empty token right after `{{ ` offers everything.
 */
export function completionsAt(text: string, cursor: number, context: ExpressionContext): CompletionResult | null {
  const before = text.slice(0, cursor)
  const open = before.lastIndexOf('{{')
  if (open < 0 || before.indexOf('}}', open) >= 0) return null
  const inside = before.slice(open + 2)
  const match = TOKEN.exec(inside)
  let token = ''
  if (match) token = match[0]
  else if (!/(^|[\s(,[+\-*/<>=!?:])$/.test(inside)) return null
  const lower = token.toLowerCase()
  const options = candidates(context).filter(
    (c) => c.label.toLowerCase().startsWith(lower) && c.label !== token,
  )
  if (!options.length) return null
  return { from: cursor - token.length, to: cursor, options: options.slice(0, 50) }
}

/** Apply a completion: the new text and cursor. Closes `{{` with ` }}` when unclosed. */
export function applyCompletion(
  text: string,
  result: CompletionResult,
  option: Completion,
): { text: string; cursor: number } {
  const after = text.slice(result.to)
  const closed = /^[^{]*\}\}/.test(after)
  const insert = option.label + (closed || option.label.endsWith('.') ? '' : ' }}')
  const next = text.slice(0, result.from) + insert + after
  const cursor = result.from + (closed || option.label.endsWith('.') ? insert.length : option.label.length)
  return { text: next, cursor }
}
