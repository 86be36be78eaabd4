import { describe, expect, it } from 'vitest'
import { catalogue } from '../flow/testCatalogue'
import { createCanvasStore } from './store'

const document = {
  name: 'T',
  variables: { greeting: 'hi' },
  nodes: [
    { id: 'start', type: 'chat-start', data: {}, position: { x: 0, y: 0 } },
    { id: 'tpl', type: 'prompt-template', data: { template: 'x' }, position: { x: 300, y: 0 } },
    { id: 'tools', type: 'toolset', data: {}, position: { x: 0, y: 300 } },
  ],
  edges: [{ id: 'e1', source: 'start', sourceHandle: 'output', target: 'tpl', targetHandle: 'input' }],
}

describe('canvas store', () => {
  it('round-trips its document', () => {
    expect(createCanvasStore(catalogue, document).getState().document()).toEqual(document)
  })

  it('refuses a wire with the reason, and adds an accepted one', () => {
    const store = createCanvasStore(catalogue, document)
    store.getState().connect({ source: 'tools', sourceHandle: 'tools', target: 'tpl', targetHandle: 'input' })
    expect(store.getState().refusal).toMatch(/'tools' socket cannot connect/)
    expect(store.getState().edges).toHaveLength(1)
    store.getState().connect({ source: 'start', sourceHandle: 'output', target: 'start', targetHandle: 'input' })
    expect(store.getState().edges).toHaveLength(1)
    const merge = createCanvasStore(catalogue, {
      nodes: [...document.nodes, { id: 'm', type: 'merge', data: {}, position: { x: 0, y: 0 } }],
      edges: [],
    })
    merge.getState().connect({ source: 'start', sourceHandle: 'output', target: 'm', targetHandle: 'input' })
    merge.getState().connect({ source: 'tpl', sourceHandle: 'output', target: 'm', targetHandle: 'input' })
    expect(merge.getState().edges.map((e) => e.id)).toEqual(['e_start_m', 'e_tpl_m'])
    expect(merge.getState().wired.m).toBe(' input input ')
  })

  it('deletes nodes and their wires in one undo step', () => {
    const store = createCanvasStore(catalogue, document)
    store.getState().onNodesChange([{ type: 'select', id: 'start', selected: true }])
    expect(store.getState().selectedId).toBe('start')
    store.getState().deleteSelected()
    expect(store.getState().nodes.map((n) => n.id)).toEqual(['tpl', 'tools'])
    expect(store.getState().edges).toHaveLength(0)
    store.getState().undo()
    expect(store.getState().nodes).toHaveLength(3)
    expect(store.getState().edges).toHaveLength(1)
    store.getState().redo()
    expect(store.getState().edges).toHaveLength(0)
  })

  it('copies and pastes with new ids', () => {
    const store = createCanvasStore(catalogue, document)
    store.getState().selectAll()
    store.getState().copy()
    store.getState().paste()
    const ids = store.getState().nodes.map((n) => n.id)
    expect(ids).toEqual(['start', 'tpl', 'tools', 'start_2', 'tpl_2', 'tools_2'])
    expect(store.getState().edges.map((e) => [e.source, e.target])).toEqual([['start', 'tpl'], ['start_2', 'tpl_2']])
  })

  it('counts a moved node as a change only when dropped', () => {
    const store = createCanvasStore(catalogue, document)
    store.getState().onNodesChange([{ type: 'position', id: 'tpl', position: { x: 5, y: 5 }, dragging: true }])
    expect(store.getState().revision).toBe(0)
    store.getState().onNodesChange([{ type: 'position', id: 'tpl', position: { x: 9, y: 9 }, dragging: false }])
    expect(store.getState().revision).toBe(1)
    expect(store.getState().contentRevision).toBe(0)
  })

  it('pins issues of its own level only', () => {
    const body = createCanvasStore(catalogue, document, { prefix: 'loop/', inLoop: true })
    body.getState().setIssues([
      { code: 'x', message: 'inner', node_id: 'loop/tpl', field: 'template' },
      { code: 'y', message: 'outer', node_id: 'tpl', field: 'template' },
      { code: 'z', message: 'edge', node_id: 'loop/tpl', edge_id: 'e1' },
    ])
    expect(body.getState().issues.byNode.tpl.map((i) => i.message)).toEqual(['inner', 'edge'])
    expect(body.getState().edges[0].className).toContain('has-issue')
  })
})
