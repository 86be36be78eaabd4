import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { RunHistory } from './RunHistory'

const calls: { url: string; method: string; body: unknown }[] = []
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status })

const RUN = {
  id: 'r1',
  status: 'completed',
  flow_id: 'f1',
  flow_version: 1,
  trigger: { message: 'hi' },
  chat_id: 'c1',
  created_at: '2026-01-01T00:00:00Z',
  started_at: '2026-01-01T00:00:00Z',
  finished_at: '2026-01-01T00:00:01Z',
  duration_ms: 1000,
  error: null,
  usage: null,
  rerun_of: null,
  rerun_from: null,
  timeline: [
    { node_id: 'start', execution: 1, node_name: 'Start', node_type: 'chat-start', status: 'completed', inputs: {}, outputs: { output: { message: 'hi' } }, error: null, attempts: 1, usage: null, started_at: '2026-01-01T00:00:00Z', finished_at: '2026-01-01T00:00:00.100Z' },
    { node_id: 'greet', execution: 1, node_name: 'Greet', node_type: 'prompt-template', status: 'completed', inputs: { input: { message: 'hi' } }, outputs: { output: { text: 'x'.repeat(2000) } }, error: null, attempts: 1, usage: null, started_at: '2026-01-01T00:00:00.100Z', finished_at: '2026-01-01T00:00:00.300Z' },
  ],
}
const CHILD = {
  ...RUN,
  id: 'c1',
  parent_run_id: 'r1parent',
  parent_node: 'call',
  children: [{ id: 'grandchild1', status: 'failed', flow_id: 'f1', flow_version: 1, parent_node: 'tool', created_at: '2026-01-01T00:00:00Z' }],
}
let document_ = { nodes: [{ id: 'start', type: 'chat-start', data: {} }, { id: 'greet', type: 'prompt-template', data: { template: 't' } }], edges: [] }
let version = 1

beforeEach(() => {
  calls.length = 0
  version = 1
  document_ = { nodes: [{ id: 'start', type: 'chat-start', data: {} }, { id: 'greet', type: 'prompt-template', data: { template: 't' } }], edges: [] }
  window.location.hash = '#/runs/r1'
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit = {}) => {
      const method = init.method ?? 'GET'
      const body = init.body ? JSON.parse(String(init.body)) : undefined
      calls.push({ url, method, body })
      if (url === '/api/runs/r1') return json(RUN)
      if (url === '/api/runs/c1') return json(CHILD)
      if (url === '/api/flows/f1' && method === 'GET') return json({ flow_id: 'f1', name: 'Hello', version, document: document_ })
      if (url === '/api/flows/f1' && method === 'PUT') {
        version += 1
        document_ = body.document
        return json({ flow_id: 'f1', name: 'Hello', version, document: document_ })
      }
      if (url === '/api/runs/r1/rerun') return json({ run_id: 'r2', status: 'running' }, 202)
      if (url.startsWith('/api/runs?')) return json({ runs: [RUN, CHILD], limit: 25, offset: 0 })
      if (url === '/api/flows') return json({ flows: [{ id: 'f1', name: 'Hello' }] })
      return json({ error: { message: `no ${url}` } }, 404)
    }),
  )
})

afterEach(() => {
  cleanup()
  vi.unstubAllGlobals()
})

describe('RunDetail', () => {
  it("shows each node's input and output, big ones collapsed", async () => {
    render(<RunHistory runId="r1" />)
    expect((await screen.findByTestId('node-output-start')).textContent).toContain('"message": "hi"')
    expect(screen.getByTestId('node-input-greet').textContent).toContain('"message": "hi"')
    const big = screen.getByTestId('node-output-greet')
    expect(big.dataset.collapsed).toBe('true')
    fireEvent.click(within(big).getByRole('button'))
    expect(big.dataset.collapsed).toBe('false')
    expect(screen.getByRole('heading', { name: 'Hello' })).toBeTruthy()
  })

  it('re-runs from a node and opens the new run', async () => {
    render(<RunHistory runId="r1" />)
    const entry = (await screen.findAllByTestId('timeline-entry'))[1]
    fireEvent.click(within(entry).getByRole('button', { name: 'Re-run from here' }))
    await waitFor(() => expect(window.location.hash).toBe('#/runs/r2'))
    expect(calls.find((c) => c.url === '/api/runs/r1/rerun')?.body).toEqual({ from_node: 'greet' })
  })

  it("pins a node's output into a new version of the flow, and unpins it", async () => {
    render(<RunHistory runId="r1" />)
    const entry = (await screen.findAllByTestId('timeline-entry'))[0]
    await waitFor(() => expect(within(entry).getByRole('button', { name: 'Pin output' }).hasAttribute('disabled')).toBe(false))
    fireEvent.click(within(entry).getByRole('button', { name: 'Pin output' }))
    await screen.findByText('Pinned in v2')
    const put = calls.find((c) => c.method === 'PUT')!.body as { document: typeof document_ }
    expect(put.document.nodes[0].data).toEqual({ pinned: { output: { message: 'hi' } } })
    expect(put.document.nodes[1].data).toEqual({ template: 't' })
    fireEvent.click(within(entry).getByRole('button', { name: 'Unpin' }))
    await waitFor(() => expect(within(entry).getByRole('button', { name: 'Pin output' })).toBeTruthy())
    expect(document_.nodes[0].data).toEqual({})
  })

  it('links a child run to its parent and to the runs its nodes started', async () => {
    window.location.hash = '#/runs/c1'
    render(<RunHistory runId="c1" />)
    const links = await screen.findByTestId('run-links')
    expect(links.textContent).toContain('Parent run r1parent')
    expect(links.textContent).toContain('by node call')
    expect(within(links).getByRole('link', { name: 'r1parent' }).getAttribute('href')).toBe('#/runs/r1parent')
    expect(within(links).getByRole('link', { name: 'grandchi' }).getAttribute('href')).toBe('#/runs/grandchild1')
  })
})

describe('RunList', () => {
  it('lists runs and filters by status', async () => {
    window.location.hash = '#/runs'
    render(<RunHistory runId={null} />)
    const [row, child] = await screen.findAllByTestId('run-row')
    expect(row.textContent).toContain('completed')
    expect(within(row).queryByTestId('child-run')).toBeNull()
    expect(within(child).getByTestId('child-run').textContent).toContain('child of r1parent')
    const group = screen.getByRole('group', { name: 'Status' })
    fireEvent.click(within(group).getByLabelText('failed'))
    fireEvent.click(within(group).getByLabelText('paused'))
    await waitFor(() => expect(calls.some((c) => c.url.includes('status=failed&status=paused'))).toBe(true))
  })
})
