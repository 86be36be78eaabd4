import { describe, expect, it } from 'vitest'
import type { RunEvent } from '../api/models'
import { formatDuration } from '../components/time'
import { inputAnswer } from '../components/waiting'
import { summaryOf } from './format'
import { applyEvent, applyReply, newTurn, type Turn } from './model'

let seq = 0
function ev(event_type: string, node: string | null, data: Record<string, unknown> = {}, timestamp = 100): RunEvent {
  seq += 1
  return {
    seq,
    run_id: 'r1',
    event_type,
    node_id: node,
    node_name: node ? node.toUpperCase() : null,
    node_type: node ? 'prompt-template' : null,
    data,
    timestamp,
  }
}

function play(events: RunEvent[], turn: Turn = newTurn('t', 'hi')): Turn {
  return events.reduce(applyEvent, turn)
}

describe('chat turn model', () => {
  it('builds step cards from started/progress/completed with duration and streamed tokens', () => {
    seq = 0
    const turn = play([
      ev('run_started', null),
      ev('started', 'llm', {}, 10),
      ev('progress', 'llm', { token: 'Hel' }),
      ev('progress', 'llm', { token: 'lo' }),
      ev('completed', 'llm', { outputs: { output: { text: 'Hello' } }, duration_ms: 1234 }, 11.5),
      ev('run_completed', null, { usage: { total_tokens: 5 } }),
    ])
    expect(turn.status).toBe('completed')
    expect(turn.streamed).toBe('Hello')
    expect(turn.steps).toHaveLength(1)
    const [step] = turn.steps
    expect(step.status).toBe('done')
    expect(step.durationMs).toBe(1234)
    expect(summaryOf(step)).toBe('Hello')
    expect(turn.usage).toEqual({ total_tokens: 5 })
  })

  it('takes the duration from the timestamps when the event has none', () => {
    seq = 0
    const turn = play([ev('started', 'a', {}, 10), ev('completed', 'a', { outputs: {} }, 10.25)])
    expect(turn.steps[0].durationMs).toBe(250)
  })

  it('ignores an event it has already applied', () => {
    seq = 0
    const first = ev('started', 'a')
    const turn = play([first, ev('completed', 'a', { outputs: {} })])
    expect(applyEvent(turn, first)).toBe(turn)
  })

  it('names the node of a failure', () => {
    seq = 0
    const turn = play([
      ev('started', 'bad'),
      ev('error', 'bad', { error: { code: 'expression_eval', message: 'field nope not found', node_id: 'bad' }, handled: false }),
      ev('run_failed', null, { error: { message: 'field nope not found', node_id: 'bad', node_name: 'BAD' } }),
    ])
    expect(turn.status).toBe('failed')
    expect(turn.steps[0].status).toBe('failed')
    expect(turn.error).toEqual({ message: 'field nope not found', nodeId: 'bad', nodeName: 'BAD' })
  })

  it('tracks what waits and drops it once resumed', () => {
    seq = 0
    let turn = play([
      ev('started', 'ok'),
      ev('waiting', 'ok', { kind: 'approval', prompt: 'Publish?', value: { a: 1 } }),
      ev('run_paused', null, { waiting: [{ node_id: 'ok', node_name: 'OK', kind: 'approval', prompt: 'Publish?' }] }),
    ])
    expect(turn.status).toBe('paused')
    expect(turn.waiting).toEqual([
      { nodeId: 'ok', nodeName: 'OK', kind: 'approval', prompt: 'Publish?', value: undefined, fields: undefined },
    ])
    expect(turn.steps[0].status).toBe('waiting')
    turn = play([ev('run_resumed', null), ev('resumed', 'ok', { input: { decision: 'approve', note: '' } }), ev('completed', 'ok', { outputs: {} })], turn)
    expect(turn.waiting).toEqual([])
    expect(turn.steps[0].status).toBe('done')
    expect(turn.steps[0].answer).toEqual({ decision: 'approve', note: '' })
  })

  it("shows an agent's tool calls and member runs in its card", () => {
    seq = 0
    const turn = play([
      ev('started', 'agent'),
      ev('agent_event', 'agent', { event: 'ToolCallStarted', agent: 'A', tool: 'city_facts', arguments: { city: 'Lima' } }),
      ev('agent_event', 'agent', { event: 'ToolCallCompleted', agent: 'A', tool: 'city_facts', arguments: { city: 'Lima' }, result: '{"x":1}', error: false }),
      ev('agent_event', 'agent', { event: 'MemberRunStarted', agent: 'Planner' }),
      ev('agent_event', 'agent', { event: 'RunContent', agent: 'Planner', content: 'Morning' }),
      ev('agent_event', 'agent', { event: 'MemberRunCompleted', agent: 'Planner', content: 'Morning: cliffs' }),
    ])
    const tools = turn.steps[0].tools
    expect(tools.map((t) => [t.kind, t.tool, t.status])).toEqual([
      ['tool', 'city_facts', 'done'],
      ['member', 'Planner', 'done'],
    ])
    expect(tools[0].result).toBe('{"x":1}')
    expect(tools[1].result).toBe('Morning: cliffs')
  })

  it('takes the final answer and the error from the ChatReply', () => {
    const turn = applyReply(newTurn('t', 'hi'), {
      chat_id: 'c',
      run_id: 'r',
      status: 'completed',
      answer: 'Final',
      usage: {},
      waiting: [],
      error: null,
      run_url: '',
      events_url: '',
    })
    expect(turn.answer).toBe('Final')
    const failed = applyReply(newTurn('t', 'hi'), {
      chat_id: 'c',
      run_id: 'r',
      status: 'failed',
      answer: null,
      usage: {},
      waiting: [],
      error: { code: 'x', message: 'boom', node_id: 'n', node_name: 'N' },
      run_url: '',
      events_url: '',
    })
    expect(failed.error).toEqual({ message: 'boom', nodeId: 'n', nodeName: 'N' })
  })

  it('builds a human input answer from text or form fields', () => {
    const w = { nodeId: 'q', nodeName: 'Q', kind: 'input', prompt: '' }
    expect(inputAnswer(w, 'Ada', {})).toBe('Ada')
    const form = { ...w, fields: [{ name: 'n', type: 'number' }, { name: 'ok', type: 'boolean' }, { name: 's' }] }
    expect(inputAnswer(form, '', { n: '3', ok: true, s: 'x' })).toEqual({ n: 3, ok: true, s: 'x' })
  })

  it('formats durations', () => {
    expect(formatDuration(0.4)).toBe('<1 ms')
    expect(formatDuration(340)).toBe('340 ms')
    expect(formatDuration(1500)).toBe('1.50 s')
    expect(formatDuration(null)).toBe('')
  })
})

describe('step summaries', () => {
  it('says what a person answered', () => {
    seq = 0
    const turn = play([
      ev('started', 'ok'),
      ev('waiting', 'ok', { kind: 'approval', prompt: 'Ship?' }),
      ev('resumed', 'ok', { input: { decision: 'reject', note: 'too long' } }),
      ev('completed', 'ok', { outputs: { decision: { decision: 'reject' } } }),
    ])
    expect(summaryOf(turn.steps[0])).toBe('rejected · “too long”')
  })
})
