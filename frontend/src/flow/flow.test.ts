import { describe, expect, it } from 'vitest'
import type { GraphDocument } from '../api/models'
import { copySelection, pasteClip } from './clipboard'
import { toDocument, toFlow } from './document'
import { emptyHistory, push, redo, undo } from './history'
import { pinIssues } from './issues'
import { layoutGraph } from './layout'
import { flowNode } from './testCatalogue'

describe('document conversion', () => {
  it('round-trips a document and keeps unknown fields', () => {
    const document: GraphDocument = {
      name: 'Greeter',
      description: 'Says hello',
      version: 1,
      variables: { greeting: 'Hello' },
      limits: { max_steps: 9 },
      nodes: [
        { id: 'start', type: 'chat-start', data: {}, position: { x: 0, y: 0 } },
        { id: 'greet', type: 'prompt-template', data: { name: 'Greet', template: '{{ $json }}' }, position: { x: 300, y: 10 }, style: { color: 'red' } } as never,
      ],
      edges: [{ id: 'e1', source: 'start', sourceHandle: 'output', target: 'greet', targetHandle: 'input', label: 'x' } as never],
    }
    const { graph, meta } = toFlow(document)
    expect(graph.nodes[1].data).toMatchObject({ kind: 'prompt-template', values: { name: 'Greet' } })
    expect(toDocument(meta, graph)).toEqual(document)
  })

  it('fills default handles and positions', () => {
    const { graph } = toFlow({ nodes: [{ id: 'a', type: 'chat-start', data: {} }], edges: [{ id: 'e', source: 'a', target: 'b' }] })
    expect(graph.nodes[0].position).toEqual({ x: 0, y: 0 })
    expect(graph.edges[0]).toMatchObject({ sourceHandle: 'output', targetHandle: 'input' })
  })
})

describe('clipboard', () => {
  it('pastes selected nodes with new ids, names and their inner edges', () => {
    const a = { ...flowNode('a', 'chat-start', { name: 'Start' }), selected: true }
    const b = { ...flowNode('b', 'prompt-template'), selected: true }
    const c = flowNode('c', 'prompt-template')
    const graph = { nodes: [a, b, c], edges: [{ id: 'e1', source: 'a', target: 'b' }, { id: 'e2', source: 'b', target: 'c' }] }
    const clip = copySelection(graph)!
    expect(clip.edges.map((e) => e.id)).toEqual(['e1'])
    const pasted = pasteClip(graph, clip)
    expect(pasted.nodes.map((n) => n.id)).toEqual(['a', 'b', 'c', 'a_2', 'b_2'])
    expect(pasted.nodes[3].data.values.name).toBe('Start 2')
    expect(pasted.nodes[3].position).toEqual({ x: 40, y: 40 })
    expect(pasted.edges[2]).toMatchObject({ source: 'a_2', target: 'b_2' })
    expect(pasted.nodes.filter((n) => n.selected).map((n) => n.id)).toEqual(['a_2', 'b_2'])
  })
})

describe('history', () => {
  it('undoes and redoes, coalescing typing in one field', () => {
    const g0 = { nodes: [], edges: [] }
    const g1 = { nodes: [flowNode('a', 'x')], edges: [] }
    const g2 = { nodes: [flowNode('a', 'x', { t: 1 })], edges: [] }
    let h = push(emptyHistory(), g0, null, 0)
    h = push(h, g1, 'a.t', 10)
    h = push(h, g1, 'a.t', 20)
    expect(h.past).toHaveLength(2)
    const back = undo(h, g2)!
    expect(back.graph).toBe(g1)
    const forward = redo(back.history, back.graph)!
    expect(forward.graph).toBe(g2)
  })
})

describe('issues', () => {
  const issues = [
    { code: 'invalid_parameter', message: 'm1', node_id: 'a', field: 'template' },
    { code: 'incompatible_socket', message: 'm2', node_id: 'b', edge_id: 'e1', field: 'input' },
    { code: 'x', message: 'm3', node_id: 'loop/inner', field: 'template' },
    { code: 'y', message: 'm4' },
  ]
  it('pins issues on nodes, edges and Loop nodes', () => {
    const pinned = pinIssues(issues)
    expect(Object.keys(pinned.byNode)).toEqual(['a', 'b', 'loop'])
    expect(pinned.byNode.loop[0].field).toBe('body')
    expect(pinned.byEdge.e1).toHaveLength(1)
    expect(pinned.general.map((i) => i.message)).toEqual(['m4'])
  })
  it('pins inner issues inside a body', () => {
    const pinned = pinIssues(issues, 'loop/')
    expect(Object.keys(pinned.byNode)).toEqual(['inner'])
  })
})

describe('layout', () => {
  it('places nodes left to right', () => {
    const nodes = layoutGraph({ nodes: [flowNode('a', 'x'), flowNode('b', 'x')], edges: [{ id: 'e', source: 'a', target: 'b' }] })
    expect(nodes[1].position.x).toBeGreaterThan(nodes[0].position.x)
  })
})
