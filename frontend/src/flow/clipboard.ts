// Copy and paste: the selected nodes and the edges between them, pasted with new ids
// (and new names, since names are unique in a graph), offset from the originals.

import type { FlowEdge, FlowGraph, FlowNode } from './types'

export interface Clip {
  nodes: FlowNode[]
  edges: FlowEdge[]
}

export function copySelection(graph: FlowGraph): Clip | null {
  const nodes = graph.nodes.filter((n) => n.selected)
  if (!nodes.length) return null
  const ids = new Set(nodes.map((n) => n.id))
  const edges = graph.edges.filter((e) => ids.has(e.source) && ids.has(e.target))
  return structuredClone({ nodes, edges })
}

/** A fresh id like `base`, `base_2`, ... not in `taken` (which it then contains). */
export function freshId(base: string, taken: Set<string>): string {
  const stem = base.replace(/_\d+$/, '') || 'node'
  let id = stem
  for (let i = 2; taken.has(id); i++) id = `${stem}_${i}`
  taken.add(id)
  return id
}

export function pasteClip(graph: FlowGraph, clip: Clip, offset = 40): FlowGraph {
  const taken = new Set<string>()
  const names = new Set<string>()
  for (const node of graph.nodes) {
    taken.add(node.id)
    const name = node.data.values.name
    if (typeof name === 'string') names.add(name)
  }
  const idMap = new Map<string, string>()
  const nodes: FlowNode[] = clip.nodes.map((node) => {
    const id = freshId(node.id, taken)
    idMap.set(node.id, id)
    const values = structuredClone(node.data.values)
    if (typeof values.name === 'string' && values.name) {
      const base = values.name.replace(/ \d+$/, '')
      let name = base
      for (let i = 2; names.has(name) || taken.has(name); i++) name = `${base} ${i}`
      names.add(name)
      values.name = name
    }
    return {
      ...node,
      id,
      selected: true,
      position: { x: node.position.x + offset, y: node.position.y + offset },
      data: { ...node.data, values },
    }
  })
  const edgeIds = new Set(graph.edges.map((e) => e.id))
  const edges: FlowEdge[] = clip.edges.map((edge) => ({
    ...edge,
    id: freshId(`e_${idMap.get(edge.source)}_${idMap.get(edge.target)}`, edgeIds),
    source: idMap.get(edge.source)!,
    target: idMap.get(edge.target)!,
    selected: false,
  }))
  return {
    nodes: [...graph.nodes.map((n) => (n.selected ? { ...n, selected: false } : n)), ...nodes],
    edges: [...graph.edges.map((e) => (e.selected ? { ...e, selected: false } : e)), ...edges],
  }
}
