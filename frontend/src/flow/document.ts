// Native document (docs/formats/native.md) <-> React Flow nodes and edges. Every field of
// the document that the canvas does not use is kept and written back on save.

import type { GraphDocument, GraphEdge, GraphNode } from '../api/models'
import type { FlowEdge, FlowGraph, FlowNode } from './types'

/** The document without its nodes and edges (name, description, variables, limits, ...). */
export type DocumentMeta = Omit<GraphDocument, 'nodes' | 'edges'> & Record<string, unknown>

const NODE_KEYS = new Set(['id', 'type', 'data', 'position'])
const EDGE_KEYS = new Set(['id', 'source', 'sourceHandle', 'target', 'targetHandle'])
// React Flow state that must never reach the document.
const TRANSIENT = new Set(['selected', 'dragging', 'measured', 'width', 'height', 'resizing'])

function rest(object: object, known: Set<string>): Record<string, unknown> | undefined {
  const extra: Record<string, unknown> = {}
  let any = false
  for (const [key, value] of Object.entries(object)) {
    if (!known.has(key)) {
      extra[key] = value
      any = true
    }
  }
  return any ? extra : undefined
}

export function toFlowNode(node: GraphNode, index = 0): FlowNode {
  const extra = rest(node, NODE_KEYS)
  return {
    id: node.id,
    type: 'nodeloom',
    position: node.position ?? { x: (index % 6) * 320, y: Math.floor(index / 6) * 260 },
    data: { kind: node.type, values: { ...(node.data ?? {}) }, ...(extra ? { extra } : {}) },
  }
}

export function toFlowEdge(edge: GraphEdge, index = 0): FlowEdge {
  const extra = rest(edge, EDGE_KEYS)
  return {
    id: edge.id ?? `edges[${index}]`,
    source: edge.source,
    target: edge.target,
    sourceHandle: edge.sourceHandle ?? 'output',
    targetHandle: edge.targetHandle ?? 'input',
    ...(extra ? { data: { extra } } : {}),
  }
}

export function toFlow(document: GraphDocument): { graph: FlowGraph; meta: DocumentMeta } {
  const { nodes = [], edges = [], ...meta } = document
  return {
    graph: {
      nodes: nodes.map((node, i) => toFlowNode(node, i)),
      edges: edges.map((edge, i) => toFlowEdge(edge, i)),
    },
    meta,
  }
}

export function toGraphNode(node: FlowNode): GraphNode {
  const out: GraphNode = {
    id: node.id,
    type: node.data.kind,
    data: node.data.values,
    position: { x: Math.round(node.position.x), y: Math.round(node.position.y) },
  }
  if (node.data.extra) {
    for (const [key, value] of Object.entries(node.data.extra)) {
      if (!TRANSIENT.has(key)) (out as unknown as Record<string, unknown>)[key] = value
    }
  }
  return out
}

export function toGraphEdge(edge: FlowEdge): GraphEdge {
  const out: GraphEdge = {
    id: edge.id,
    source: edge.source,
    sourceHandle: edge.sourceHandle ?? 'output',
    target: edge.target,
    targetHandle: edge.targetHandle ?? 'input',
  }
  const extra = edge.data?.extra
  if (extra) Object.assign(out, extra)
  return out
}

export function toDocument(meta: DocumentMeta, graph: FlowGraph): GraphDocument {
  return { ...meta, nodes: graph.nodes.map(toGraphNode), edges: graph.edges.map(toGraphEdge) }
}

/** An inner graph value (Loop `body`) as a document, tolerating a missing or odd value. */
export function asInnerDocument(value: unknown): GraphDocument {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const v = value as Record<string, unknown>
    return {
      ...v,
      nodes: Array.isArray(v.nodes) ? (v.nodes as GraphNode[]) : [],
      edges: Array.isArray(v.edges) ? (v.edges as GraphEdge[]) : [],
    }
  }
  return { nodes: [], edges: [] }
}
