// Auto layout: dagre, left to right, from each node's measured size.

import dagre from '@dagrejs/dagre'
import type { FlowGraph, FlowNode } from './types'

export function layoutGraph(graph: FlowGraph): FlowNode[] {
  const g = new dagre.graphlib.Graph()
  g.setGraph({ rankdir: 'LR', nodesep: 40, ranksep: 90, marginx: 20, marginy: 20 })
  g.setDefaultEdgeLabel(() => ({}))
  for (const node of graph.nodes) {
    g.setNode(node.id, { width: node.measured?.width ?? 280, height: node.measured?.height ?? 200 })
  }
  for (const edge of graph.edges) {
    if (g.hasNode(edge.source) && g.hasNode(edge.target) && edge.source !== edge.target) {
      g.setEdge(edge.source, edge.target)
    }
  }
  dagre.layout(g)
  return graph.nodes.map((node) => {
    const placed = g.node(node.id)
    if (!placed) return node
    const width = node.measured?.width ?? 280
    const height = node.measured?.height ?? 200
    return { ...node, position: { x: placed.x - width / 2, y: placed.y - height / 2 } }
  })
}
