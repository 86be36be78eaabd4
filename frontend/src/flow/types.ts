// The editor's graph types: React Flow nodes and edges carrying a native document's data.

import type { Edge, Node } from '@xyflow/react'

/** A node on the canvas: `kind` is the node type id, `values` the document node's `data`. */
export interface NodeData extends Record<string, unknown> {
  kind: string
  values: Record<string, unknown>
  /** Fields of the document node other than id/type/data/position, kept on round trip. */
  extra?: Record<string, unknown>
}

export type FlowNode = Node<NodeData, 'nodeloom'>

/** The name a node is shown and reached by: its `name` setting, else its id. */
export function displayName(id: string, values: Record<string, unknown>): string {
  return typeof values.name === 'string' && values.name ? values.name : id
}

export interface EdgeData extends Record<string, unknown> {
  extra?: Record<string, unknown>
}

export type FlowEdge = Edge<EdgeData>

/** A graph as the editor holds it. */
export interface FlowGraph {
  nodes: FlowNode[]
  edges: FlowEdge[]
}

/** A wire being made or checked: the React Flow `Connection` shape. */
export interface Wire {
  source: string
  target: string
  sourceHandle?: string | null
  targetHandle?: string | null
}
