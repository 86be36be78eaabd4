import { act, cleanup, fireEvent, render, screen } from '@testing-library/react'
import { ReactFlowProvider } from '@xyflow/react'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { catalogue } from '../flow/testCatalogue'
import type { FlowNode } from '../flow/types'
import { useCatalogue } from '../state/catalogue'
import { useCurrentFlow } from '../state/currentFlow'
import { useRunStatus } from '../state/runStatus'
import { useSchedules } from '../state/schedules'
import { NodeCard } from './NodeCard'
import { CanvasStoreContext, createCanvasStore } from './store'

function renderNode(nodeId = 'agent', store = createCanvasStore(catalogue, {
  nodes: [
    { id: 'start', type: 'chat-start', data: {} },
    { id: 'agent', type: 'agent', data: { name: 'Helper', temperature: 0.3 } },
    { id: 'tick', type: 'schedule-trigger', data: { every: '5m' } },
  ],
  edges: [{ id: 'e1', source: 'start', target: 'agent', sourceHandle: 'output', targetHandle: 'instructions' }],
})) {
  const node = store.getState().nodes.find((n) => n.id === nodeId) as FlowNode
  const props = {
    id: node.id, data: node.data, type: 'nodeloom', selected: false, dragging: false, draggable: true,
    selectable: true, deletable: true, zIndex: 0, isConnectable: true, positionAbsoluteX: 0, positionAbsoluteY: 0,
  } as unknown as Parameters<typeof NodeCard>[0]
  render(
    <ReactFlowProvider>
      <CanvasStoreContext.Provider value={store}>
        <NodeCard {...props} />
      </CanvasStoreContext.Provider>
    </ReactFlowProvider>,
  )
  return store
}

describe('NodeCard', () => {
  beforeEach(() => {
    useCatalogue.setState({ catalogue })
    useRunStatus.setState({ runId: null, nodes: {} })
  })
  afterEach(cleanup)

  it('renders the title, inline controls and a dimmed wired hybrid parameter', () => {
    renderNode()
    expect(screen.getByTestId('node-title').textContent).toBe('Helper')
    const instructions = screen.getByLabelText('instructions') as HTMLTextAreaElement
    expect(instructions.disabled).toBe(true)
    expect(instructions.className).toContain('nodrag')
    expect(screen.getByText('wired')).toBeTruthy()
    expect((screen.getByLabelText('temperature') as HTMLInputElement).value).toBe('0.3')
  })

  it("shows a Schedule Trigger's next fire time from the server, or that it is paused", () => {
    useCurrentFlow.setState({ flowId: 'f1', version: 2 })
    const info = { id: 'f1:tick', node_id: 'tick', next_fire_at: '2026-12-01T09:00:00+00:00', paused: false }
    useSchedules.setState({ key: 'f1@2', byNode: { tick: info } }) // loaded: no request
    renderNode('tick')
    const note = screen.getByTestId('next-fire')
    expect(note.textContent).toMatch(/^next /)
    expect(note.title).toBe('2026-12-01T09:00:00+00:00')
    act(() => useSchedules.setState({ byNode: { tick: { ...info, paused: true } } }))
    expect(screen.getByTestId('next-fire').textContent).toBe('paused')
  })

  it('marks the node with its run status', () => {
    renderNode()
    act(() => useRunStatus.setState({ nodes: { agent: 'running' } }))
    const root = document.querySelector('[data-status]') as HTMLElement
    expect(root.dataset.status).toBe('running')
    expect(root.className).toContain('status-running')
    act(() => useRunStatus.setState({ nodes: { agent: 'failed' } }))
    expect((document.querySelector('[data-status]') as HTMLElement).dataset.status).toBe('failed')
  })

  it('pins validation issues on the node and the field', () => {
    const store = renderNode()
    act(() => store.getState().setIssues([{ code: 'invalid_parameter', message: 'too hot', node_id: 'agent', field: 'temperature' }]))
    expect(screen.getByTestId('node-issues').textContent).toContain('too hot')
    expect(screen.getByTestId('field-issue').textContent).toBe('too hot')
  })

  it('writes edits into the store, undoably', () => {
    const store = renderNode()
    fireEvent.change(screen.getByLabelText('temperature'), { target: { value: '0.9' } })
    expect(store.getState().nodes[1].data.values.temperature).toBe(0.9)
    store.getState().undo()
    expect(store.getState().nodes[1].data.values.temperature).toBe(0.3)
  })
})
