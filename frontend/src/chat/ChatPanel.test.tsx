import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { useCurrentFlow } from '../state/currentFlow'
import { useRunStatus } from '../state/runStatus'
import { ChatPanel } from './ChatPanel'
import { useChat } from './session'

function sse(frames: { event: string; data: unknown; id?: number }[]): Response {
  const text = frames
    .map((f) => `${f.id !== undefined ? `id: ${f.id}\n` : ''}event: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`)
    .join('')
  const bytes = new TextEncoder().encode(`retry: 2000\n\n${text}`)
  // split into uneven chunks to exercise the parser in situ
  const chunks = [bytes.slice(0, 37), bytes.slice(37, 300), bytes.slice(300)]
  return new Response(
    new ReadableStream({
      start(controller) {
        for (const chunk of chunks) if (chunk.length) controller.enqueue(chunk)
        controller.close()
      },
    }),
    { headers: { 'Content-Type': 'text/event-stream' } },
  )
}

const FRAME_OF: Record<string, string> = {
  started: 'FlowNodeStarted',
  completed: 'FlowNodeCompleted',
  error: 'RunError',
}

function event(seq: number, event_type: string, node: string | null, data: Record<string, unknown> = {}) {
  const frame = event_type === 'progress' && 'token' in data ? 'RunContent' : (FRAME_OF[event_type] ?? event_type)
  return {
    id: seq,
    event: frame,
    data: { seq, run_id: 'r1', event_type, node_id: node, node_name: node && node[0].toUpperCase() + node.slice(1), node_type: 'x', data, timestamp: 1000 + seq },
  }
}

/** The server's FlowStep frame: a node's flow_step block (no `id:`, like ChatTurn). */
function step(node: string, status: string, summary = '', detail: Record<string, unknown> = {}) {
  return {
    event: 'FlowStep',
    data: { type: 'flow_step', node_id: node, node_name: node[0].toUpperCase() + node.slice(1), node_type: 'x', status, summary, detail, duration_ms: status === 'started' ? null : 1 },
  }
}

/** The body of the chat request(s) the panel sent. */
function chatBodies() {
  return calls.filter((c) => c.url.endsWith('/chat')).map((c) => c.body)
}

function reply(status: string, extra: Record<string, unknown> = {}) {
  return {
    event: 'ChatReply',
    data: { chat_id: 'c1', run_id: 'r1', status, answer: null, usage: {}, waiting: [], error: null, run_url: '/api/runs/r1', events_url: '/api/runs/r1/events', ...extra },
  }
}

type Handler = (url: string, init: RequestInit) => Response | Promise<Response>
let routes: [RegExp, string, Handler][] = []
const calls: { url: string; method: string; body: unknown }[] = []

beforeEach(() => {
  routes = []
  calls.length = 0
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit = {}) => {
      const method = init.method ?? 'GET'
      calls.push({ url, method, body: init.body ? JSON.parse(String(init.body)) : undefined })
      const route = routes.find(([re, m]) => m === method && re.test(url))
      if (!route) return new Response(JSON.stringify({ error: { code: 'not_found', message: `no ${url}` } }), { status: 404 })
      return route[2](url, init)
    }),
  )
  useCurrentFlow.setState({ flowId: 'f1', name: 'Demo', version: 1, dirty: false, save: null })
  useChat.getState().startOver()
  useChat.getState().setTools([])
})

afterEach(() => {
  cleanup()
  vi.unstubAllGlobals()
})

function sendMessage(text: string) {
  const box = screen.getByLabelText('Message')
  fireEvent.change(box, { target: { value: text } })
  fireEvent.keyDown(box, { key: 'Enter' })
}

describe('ChatPanel', () => {
  it('streams a turn, pauses on an approval, resumes and shows the answer', async () => {
    routes.push([
      /\/api\/flows\/f1\/chat$/,
      'POST',
      () =>
        sse([
          { event: 'ChatTurn', data: { chat_id: 'c1', run_id: 'r1', run_url: '/api/runs/r1', events_url: '/api/runs/r1/events' } },
          event(1, 'run_started', null),
          event(2, 'started', 'start'),
          event(3, 'completed', 'start', { outputs: { output: { message: 'hi' } }, duration_ms: 1 }),
          event(4, 'started', 'ok'),
          step('ok', 'started'),
          event(5, 'waiting', 'ok', { kind: 'approval', prompt: 'Publish hi?', value: { message: 'hi' } }),
          event(6, 'run_paused', null, { waiting: [{ node_id: 'ok', node_name: 'Ok', kind: 'approval', prompt: 'Publish hi?' }] }),
          reply('paused', { waiting: [{ node_id: 'ok', node_name: 'Ok', kind: 'approval' }] }),
        ]),
    ])
    routes.push([/\/api\/runs\/r1\/resume$/, 'POST', () => new Response(JSON.stringify({ run_id: 'r1', status: 'running' }), { status: 202 })])
    routes.push([
      /\/api\/runs\/r1\/events/,
      'GET',
      () =>
        sse([
          event(7, 'run_resumed', null, { after: 'paused' }),
          event(8, 'resumed', 'ok', { input: { decision: 'approve', note: 'fine' } }),
          event(9, 'completed', 'ok', { outputs: { approve: { message: 'hi' } }, duration_ms: 1 }),
          event(10, 'started', 'publish'),
          event(11, 'progress', 'publish', { token: 'publi' }),
          event(12, 'progress', 'publish', { token: 'shed' }),
          event(13, 'completed', 'publish', { outputs: { output: { text: 'published hi' } }, duration_ms: 2 }),
          event(14, 'run_completed', null, { usage: {} }),
        ]),
    ])
    routes.push([
      /\/api\/runs\/r1\/steps$/,
      'GET',
      () =>
        new Response(
          JSON.stringify({
            show_flow_steps: true,
            steps: [step('ok', 'completed', '→ approve').data, step('publish', 'started').data, step('publish', 'completed', 'published hi').data],
          }),
        ),
    ])
    routes.push([
      /\/api\/runs\/r1$/,
      'GET',
      () =>
        new Response(
          JSON.stringify({ id: 'r1', flow_id: 'f1', flow_version: 1, result: null, timeline: [{ node_id: 'publish', status: 'completed', outputs: { output: { text: 'published hi' } } }] }),
        ),
    ])
    routes.push([
      /\/api\/flows\/f1\?version=1$/,
      'GET',
      () =>
        new Response(
          JSON.stringify({ flow_id: 'f1', version: 1, document: { nodes: [{ id: 'start', type: 'chat-start', data: {} }, { id: 'ok', type: 'approval', data: {} }, { id: 'publish', type: 'prompt-template', data: {} }], edges: [{ id: 'e1', source: 'start', target: 'ok' }, { id: 'e2', source: 'ok', target: 'publish' }] } }),
        ),
    ])

    render(<ChatPanel />)
    sendMessage('hi')
    const approval = await screen.findByTestId('approval')
    expect(within(approval).getByText('Publish hi?')).toBeTruthy()
    expect(chatBodies()).toEqual([{ message: 'hi', stream: true }])
    expect(useRunStatus.getState().runId).toBe('r1')
    expect(useRunStatus.getState().nodes).toEqual({ start: 'done', ok: 'waiting' })
    const cards = screen.getAllByTestId('step-card')
    expect(cards.map((c) => [c.dataset.nodeId, c.dataset.status])).toEqual([['ok', 'waiting']])

    fireEvent.change(within(approval).getByLabelText('Note'), { target: { value: 'fine' } })
    await act(async () => {
      fireEvent.click(within(approval).getByRole('button', { name: 'Approve' }))
    })
    await waitFor(() => expect(screen.getByTestId('chat-answer').dataset.final).toBe('true'))
    expect(screen.getByTestId('chat-answer').textContent).toBe('published hi')
    const resume = calls.find((c) => c.url.endsWith('/resume'))
    expect(resume?.body).toEqual({ answers: { ok: { decision: 'approve', note: 'fine' } } })
    const follow = calls.find((c) => c.url.includes('/events'))
    expect(follow?.url).toBe('/api/runs/r1/events')
    expect(screen.queryByTestId('approval')).toBeNull()
    await waitFor(() =>
      expect(screen.getAllByTestId('step-card').map((c) => [c.dataset.nodeId, c.dataset.status])).toEqual([
        ['ok', 'done'],
        ['publish', 'done'],
      ]),
    )
    expect(useRunStatus.getState().nodes.publish).toBe('done')
    expect(screen.getByRole('link', { name: 'Open run' }).getAttribute('href')).toBe('#/runs/r1')

    // the next turn carries the chat id
    routes[0] = [/\/api\/flows\/f1\/chat$/, 'POST', () => sse([reply('completed', { answer: 'again' })])]
    sendMessage('more')
    await waitFor(() => expect(chatBodies().at(-1)).toEqual({ message: 'more', chat_id: 'c1', stream: true }))
  })

  it('shows a failure naming the node', async () => {
    routes.push([
      /\/chat$/,
      'POST',
      () =>
        sse([
          { event: 'ChatTurn', data: { chat_id: 'c1', run_id: 'r1' } },
          event(1, 'started', 'bad'),
          step('bad', 'started'),
          event(2, 'error', 'bad', { error: { code: 'expression_eval', message: 'field nope not found' }, handled: false }),
          step('bad', 'error', 'field nope not found', { error: { code: 'expression_eval', message: 'field nope not found' } }),
          event(3, 'run_failed', null, { error: { message: 'field nope not found', node_id: 'bad', node_name: 'Bad' } }),
          reply('failed', { error: { code: 'expression_eval', message: 'field nope not found', node_id: 'bad', node_name: 'Bad' } }),
        ]),
    ])
    render(<ChatPanel />)
    sendMessage('x')
    const alert = await screen.findByRole('alert')
    expect(alert.textContent).toContain('Bad')
    expect(alert.textContent).toContain('field nope not found')
    expect(screen.getByTestId('step-card').dataset.status).toBe('failed')
  })

  it("renders the server's flow_step blocks as the cards, with their summaries", async () => {
    routes.push([
      /\/chat$/,
      'POST',
      () =>
        sse([
          { event: 'ChatTurn', data: { chat_id: 'c1', run_id: 'r1' } },
          event(1, 'started', 'check'),
          step('check', 'started'),
          event(2, 'completed', 'check', { outputs: { true: { message: 'go' } } }),
          step('check', 'completed', '→ true', { outputs: { true: { message: 'go' } } }),
          event(3, 'skipped', 'other', { reason: "no value arrived on 'input'" }),
          step('other', 'skipped', "no value arrived on 'input'", { reason: "no value arrived on 'input'" }),
          event(4, 'started', 'fetch'),
          step('fetch', 'started'),
          event(5, 'completed', 'fetch', { outputs: { status: 200 } }),
          step('fetch', 'completed', 'GET api.example.com → 200', { outputs: { status: 200 } }),
          event(6, 'run_completed', null, { usage: {} }),
          reply('completed', { answer: '{"status": 200}' }),
        ]),
    ])
    render(<ChatPanel />)
    sendMessage('go')
    await waitFor(() => expect(screen.getByTestId('chat-answer').dataset.final).toBe('true'))
    const cards = screen.getAllByTestId('step-card')
    expect(cards.map((c) => [c.dataset.nodeId, c.dataset.status, c.querySelector('.step-summary')?.textContent])).toEqual([
      ['check', 'done', '→ true'],
      ['other', 'skipped', "no value arrived on 'input'"],
      ['fetch', 'done', 'GET api.example.com → 200'],
    ])
  })

  it('sends the user tools picked from those the server offers', async () => {
    routes.push([
      /\/api\/tools$/,
      'GET',
      () => new Response(JSON.stringify({ tools: [{ name: 'shop', type: 'toolset', description: 'Prices' }, { name: 'math', type: 'toolset', description: '' }] })),
    ])
    routes.push([/\/chat$/, 'POST', () => sse([reply('completed', { answer: 'ok' })])])
    render(<ChatPanel />)
    const picker = await screen.findByRole('group', { name: 'Tools' })
    fireEvent.click(within(picker).getByLabelText('shop'))
    sendMessage('bread?')
    await waitFor(() => expect(screen.getByTestId('chat-answer').textContent).toBe('ok'))
    expect(chatBodies()).toEqual([{ message: 'bread?', stream: true, tools: ['shop'] }])
  })

  it('asks to save a flow that was never saved', async () => {
    useCurrentFlow.setState({ flowId: null, save: null })
    render(<ChatPanel />)
    sendMessage('x')
    expect((await screen.findByRole('alert')).textContent).toBe('Save the flow first')
    expect(chatBodies()).toHaveLength(0)
  })

  it('saves a dirty flow before sending', async () => {
    const save = vi.fn(async () => 'f2')
    useCurrentFlow.setState({ flowId: 'f1', dirty: true, save })
    routes.push([/\/api\/flows\/f2\/chat$/, 'POST', () => sse([reply('completed', { answer: 'ok' })])])
    render(<ChatPanel />)
    sendMessage('x')
    await waitFor(() => expect(screen.getByTestId('chat-answer').textContent).toBe('ok'))
    expect(save).toHaveBeenCalledOnce()
  })

  it('shows an API error of the chat request', async () => {
    routes.push([/\/chat$/, 'POST', () => new Response(JSON.stringify({ error: { code: 'not_found', message: 'no flow f1' } }), { status: 404 })])
    render(<ChatPanel />)
    sendMessage('x')
    expect((await screen.findByRole('alert')).textContent).toContain('no flow f1')
  })
})
