import { describe, expect, it } from 'vitest'
import type { FlowStep, RunEvent } from '../api/models'
import { formatDuration } from '../components/time'
import { inputAnswer } from '../components/waiting'
import { summaryOf } from './format'
import { applyEvent, applyFlowStep, applyFlowSteps, applyReply, newTurn, type Turn } from './model'

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

/** The server's flow_step block of node `node` (src/nodeloom/flow_steps.py). */
function block(node: string, status: FlowStep['status'], summary = '', detail: Record<string, unknown> = {}, duration_ms: number | null = null): FlowStep {
  return { type: 'flow_step', node_id: node, node_name: node.toUpperCase(), node_type: 'prompt-template', status, summary, detail, duration_ms }
}

/** Run events and flow_step blocks, in the order a chat stream sends them. */
function play(items: (RunEvent | FlowStep)[], turn: Turn = newTurn('t', 'hi')): Turn {
  const isBlock = (item: RunEvent | FlowStep): item is FlowStep => (item as FlowStep).type === 'flow_step'
  return items.reduce((t, item) => (isBlock(item) ? applyFlowStep(t, item) : applyEvent(t, item)), turn)
}

describe('chat turn model', () => {
  it('builds step cards from the server flow_step blocks, tokens streaming meanwhile', () => {
    seq = 0
    const turn = play([
      ev('run_started', null),
      ev('started', 'llm', {}, 10),
      block('llm', 'started'),
      ev('progress', 'llm', { token: 'Hel' }),
      ev('progress', 'llm', { token: 'lo' }),
      ev('completed', 'llm', { outputs: { output: { text: 'Hello' } }, duration_ms: 1234 }, 11.5),
      block('llm', 'completed', 'Hello', { outputs: { output: { text: 'Hello' } } }, 1234),
      ev('run_completed', null, { usage: { total_tokens: 5 } }),
    ])
    expect(turn.status).toBe('completed')
    expect(turn.streamed).toBe('Hello')
    expect(turn.steps).toHaveLength(1)
    const [step] = turn.steps
    expect(step.status).toBe('done')
    expect(step.durationMs).toBe(1234)
    expect(step.tokens).toBe('Hello')
    expect(step.outputs).toEqual({ output: { text: 'Hello' } })
    expect(summaryOf(step)).toBe('Hello')
    expect(turn.usage).toEqual({ total_tokens: 5 })
  })

  it("shows the server's summary, not one rebuilt from raw events", () => {
    seq = 0
    const turn = play([
      ev('started', 'check'),
      ev('completed', 'check', { outputs: { true: { message: 'go' } } }),
      ev('skipped', 'other', { reason: "'check' did not fire 'false'" }),
    ])
    expect(turn.steps).toEqual([])  // raw node events make no card
    const carded = play([
      block('check', 'started'),
      block('check', 'completed', '→ true', { outputs: { true: { message: 'go' } } }, 0),
      block('other', 'skipped', "'check' did not fire 'false'", { reason: "'check' did not fire 'false'" }),
      block('fetch', 'started'),
      block('fetch', 'completed', 'GET api.example.com → 200', {}, 340),
    ], turn)
    expect(carded.steps.map((s) => [s.key, s.status, summaryOf(s)])).toEqual([
      ['check#0', 'done', '→ true'],
      ['other#0', 'skipped', "'check' did not fire 'false'"],
      ['fetch#0', 'done', 'GET api.example.com → 200'],
    ])
  })

  it('gives each execution of a node its own card', () => {
    const turn = play([
      block('each', 'started'),
      block('each', 'completed', 'one'),
      block('each', 'started'),
      block('each', 'completed', 'two'),
    ])
    expect(turn.steps.map((s) => [s.key, s.summary])).toEqual([
      ['each#0', 'one'],
      ['each#1', 'two'],
    ])
  })

  it('takes the blocks of the ChatReply or of a recorded run once, whatever was streamed', () => {
    const blocks = [block('a', 'completed', 'A done'), block('b', 'skipped', 'no input')]
    const streamed = play([block('a', 'started'), blocks[0]])
    const after = applyFlowSteps(streamed, blocks)
    expect(after.steps.map((s) => [s.key, s.status])).toEqual([
      ['a#0', 'done'],
      ['b#0', 'skipped'],
    ])
    expect(applyFlowSteps(after, blocks).steps).toEqual(after.steps)
  })

  it("keeps an agent's tool calls as its content when the flow shows no steps", () => {
    seq = 0
    const turn = play([
      ev('run_started', null),
      ev('agent_event', 'agent', { event: 'ToolCallStarted', agent: 'A', tool: 'price', arguments: { item: 'bread' } }),
      ev('agent_event', 'agent', { event: 'ToolCallCompleted', agent: 'A', tool: 'price', result: '3 euros', error: false }),
      ev('progress', 'agent', { token: 'Bread costs 3 euros' }),
      ev('run_completed', null, { usage: {} }),
    ])
    expect(turn.streamed).toBe('Bread costs 3 euros')
    expect(turn.steps.map((s) => [s.nodeId, s.status, s.tools.map((t) => t.tool)])).toEqual([['agent', 'done', ['price']]])
  })

  it("nests a flow tool's child run events under the tool call that started it", () => {
    seq = 0
    const call = { agent: 'A', tool: 'shout_it', tool_call_id: 'call_1' }
    const child = { ...call, event: 'ToolCallProgress', child_run_id: 'child123456' }
    const turn = play([
      ev('run_started', null),
      ev('agent_event', 'agent', { ...call, event: 'ToolCallStarted', arguments: { message: 'hi' } }),
      ev('agent_event', 'agent', { ...child, child_event: 'completed', node_name: 'Shout' }),
      ev('agent_event', 'agent', { ...child, child_event: 'run_completed', node_name: null }),
      ev('agent_event', 'agent', { ...call, event: 'ToolCallCompleted', result: 'HI', error: false }),
      ev('run_completed', null, { usage: {} }),
    ])
    const [tool] = turn.steps[0].tools
    expect([tool.status, tool.result, tool.childRunId]).toEqual(['done', 'HI', 'child123456'])
    expect(tool.progress).toEqual(['Shout: completed', 'run_completed'])
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
      block('bad', 'started'),
      ev('error', 'bad', { error: { code: 'expression_eval', message: 'field nope not found', node_id: 'bad' }, handled: false }),
      block('bad', 'error', 'field nope not found', { error: { code: 'expression_eval', message: 'field nope not found' } }),
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
      block('ok', 'started'),
      ev('waiting', 'ok', { kind: 'approval', prompt: 'Publish?', value: { a: 1 } }),
      ev('run_paused', null, { waiting: [{ node_id: 'ok', node_name: 'OK', kind: 'approval', prompt: 'Publish?' }] }),
    ])
    expect(turn.status).toBe('paused')
    expect(turn.waiting).toEqual([
      { nodeId: 'ok', nodeName: 'OK', kind: 'approval', prompt: 'Publish?', value: undefined, fields: undefined },
    ])
    expect(turn.steps[0].status).toBe('waiting')
    turn = play(
      [ev('run_resumed', null), ev('resumed', 'ok', { input: { decision: 'approve', note: '' } }), ev('completed', 'ok', { outputs: {} }), block('ok', 'completed', '→ output')],
      turn,
    )
    expect(turn.waiting).toEqual([])
    expect(turn.steps[0].status).toBe('done')
    expect(turn.steps[0].answer).toEqual({ decision: 'approve', note: '' })
  })

  it("shows an agent's tool calls and member runs in its card", () => {
    seq = 0
    const turn = play([
      ev('started', 'agent'),
      block('agent', 'started'),
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
      block('ok', 'started'),
      ev('waiting', 'ok', { kind: 'approval', prompt: 'Ship?' }),
      ev('resumed', 'ok', { input: { decision: 'reject', note: 'too long' } }),
      block('ok', 'completed', '→ decision', { outputs: { decision: { decision: 'reject' } } }),
    ])
    expect(summaryOf(turn.steps[0])).toBe('rejected · “too long”')
  })
})
