// A chat turn as the panel shows it (seed 003): the user's message, the answer growing
// token by token, one step card per node execution, what waits for a person, the error.
// The cards come from the server's `flow_step` blocks (FlowStep frames of the chat stream,
// the ChatReply's `steps`); the run's raw events only add the agents' content (tokens,
// tool calls) and what waits for a person. Plain functions over plain data, so they are
// tested without a DOM.

import type { FlowStep, RunEvent } from '../api/models'
import type { Waiting } from '../components/waiting'

export type { Waiting }

export type StepStatus = 'running' | 'done' | 'skipped' | 'failed' | 'waiting'

export interface ToolCall {
  key: string
  /** A tool call, or a member agent's run (a team's sub-agent). */
  kind: 'tool' | 'member'
  tool: string
  agent: string | null
  arguments: unknown
  result?: string | null
  error?: boolean
  status: 'running' | 'done' | 'failed'
  /** The model's id of the call: what nests a Flow Tool's child events under it. */
  callId?: string | null
  /** A Flow Tool's call: the child run, and its steps so far ("Shout: completed"). */
  childRunId?: string
  progress?: string[]
}

export interface Step {
  /** nodeId#n: the n-th execution of the node in this turn. */
  key: string
  nodeId: string
  nodeName: string
  nodeType: string
  status: StepStatus
  startedAt: number | null
  finishedAt: number | null
  durationMs: number | null
  outputs?: Record<string, unknown>
  error?: { message: string; code?: string }
  pinned?: boolean
  reason?: string
  /** The server's one-line summary of the step (its flow_step block). */
  summary?: string
  tokens: string
  tools: ToolCall[]
  notes: string[]
  waiting?: Waiting
  answer?: unknown
}

export type TurnStatus = 'starting' | 'running' | 'paused' | 'completed' | 'failed' | 'cancelled'

export interface TurnError {
  message: string
  nodeId?: string | null
  nodeName?: string | null
}

export interface Turn {
  key: string
  message: string
  runId: string | null
  status: TurnStatus
  /** Tokens streamed so far (RunContent). */
  streamed: string
  /** The final answer (ChatReply), replacing the streamed tokens. */
  answer: string | null
  steps: Step[]
  waiting: Waiting[]
  error: TurnError | null
  lastSeq: number
  usage: Record<string, number> | null
}

export function newTurn(key: string, message: string): Turn {
  return {
    key,
    message,
    runId: null,
    status: 'starting',
    streamed: '',
    answer: null,
    steps: [],
    waiting: [],
    error: null,
    lastSeq: 0,
    usage: null,
  }
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : ''
}

function errorOf(value: unknown): TurnError {
  if (value && typeof value === 'object') {
    const e = value as Record<string, unknown>
    return {
      message: str(e.message) || str(e.error) || JSON.stringify(value),
      nodeId: (e.node_id as string | undefined) ?? null,
      nodeName: (e.node_name as string | undefined) ?? null,
    }
  }
  return { message: String(value) }
}

/** Applies one run event to a turn; answers a new turn (never mutates). Events already
 * applied (seq <= lastSeq) are ignored, so a resent event does no harm. */
export function applyEvent(turn: Turn, event: RunEvent): Turn {
  if (event.seq <= turn.lastSeq) return turn
  const next: Turn = { ...turn, lastSeq: event.seq, runId: turn.runId ?? event.run_id }
  const data = event.data ?? {}
  switch (event.event_type) {
    case 'run_started':
    case 'run_resumed':
      next.status = 'running'
      next.error = null
      return next
    case 'run_completed':
      next.status = 'completed'
      next.waiting = []
      // Cards no block settles (an agent's content when the flow shows no steps) end with the run.
      next.steps = next.steps.map((s) => (s.status === 'running' && s.summary === undefined ? { ...s, status: 'done' } : s))
      if (data.usage && typeof data.usage === 'object') next.usage = data.usage as Record<string, number>
      return next
    case 'run_failed':
      next.status = 'failed'
      next.waiting = []
      next.steps = stopped(next.steps, 'the run failed')
      if (data.error) next.error = errorOf(data.error)
      return next
    case 'run_cancelled':
      next.status = 'cancelled'
      next.waiting = []
      next.steps = stopped(next.steps, 'cancelled')
      return next
    case 'run_paused': {
      next.status = 'paused'
      const list = Array.isArray(data.waiting) ? (data.waiting as Record<string, unknown>[]) : []
      if (list.length) next.waiting = list.map(waitingOf)
      return next
    }
  }
  if (!event.node_id) return next
  if (event.event_type === 'progress' && typeof data.token === 'string') next.streamed += data.token
  if (event.event_type === 'error' && data.handled !== true) {
    const error = errorOf(data.error)
    next.error = { message: error.message, nodeId: event.node_id, nodeName: event.node_name ?? event.node_id }
  }
  // The agents' content joins the node's card; an agent's card is made for it if the
  // flow shows no steps (Chat Start's showFlowSteps off).
  let index = next.steps.findLastIndex((s) => s.nodeId === event.node_id)
  if (index < 0 && event.event_type !== 'agent_event') return next
  if (index < 0) {
    next.steps = [...next.steps, blankStep(next.steps, event.node_id, event.node_name, event.node_type)]
    index = next.steps.length - 1
  }
  const step: Step = { ...next.steps[index] }
  switch (event.event_type) {
    case 'progress':
      if (typeof data.token === 'string') {
        step.tokens += data.token
      } else if (typeof data.message === 'string') {
        step.notes = [...step.notes, data.message]
      } else if (data.iteration !== undefined) {
        step.notes = [...step.notes, `iteration ${String(data.iteration)}${data.of ? ` of ${String(data.of)}` : ''}`]
      } else if (data.retry && typeof data.retry === 'object') {
        const retry = data.retry as Record<string, unknown>
        step.notes = [...step.notes, `retry ${String(retry.attempt ?? '')}: ${errorOf(retry.error).message}`]
      }
      break
    case 'waiting': {
      step.status = 'waiting'
      const waiting = waitingOf({ ...data, node_id: event.node_id, node_name: step.nodeName })
      step.waiting = waiting
      next.waiting = [...next.waiting.filter((w) => w.nodeId !== waiting.nodeId), waiting]
      break
    }
    case 'resumed':
      step.status = 'running'
      step.answer = data.input
      step.waiting = undefined
      next.waiting = next.waiting.filter((w) => w.nodeId !== event.node_id)
      break
    case 'agent_event':
      step.tools = toolsAfter(step.tools, data)
      break
    default:
      return next
  }
  next.steps = next.steps.map((s, i) => (i === index ? step : s))
  return next
}

function blankStep(steps: Step[], nodeId: string, nodeName?: string | null, nodeType?: string | null): Step {
  const n = steps.filter((s) => s.nodeId === nodeId).length
  return {
    key: `${nodeId}#${n}`,
    nodeId,
    nodeName: nodeName ?? nodeId,
    nodeType: nodeType ?? '',
    status: 'running',
    startedAt: null,
    finishedAt: null,
    durationMs: null,
    tokens: '',
    tools: [],
    notes: [],
  }
}

const BLOCK_STATUS: Record<FlowStep['status'], StepStatus> = {
  started: 'running',
  completed: 'done',
  error: 'failed',
  skipped: 'skipped',
}

/** Applies the server's flow_step block to the turn's cards: a `started` block opens a
 * card for the node's next execution; the other statuses settle its open card (or add one:
 * a skipped node never started). Answers a new turn. */
export function applyFlowStep(turn: Turn, block: FlowStep, now: number = Date.now() / 1000): Turn {
  // The node's open card: one no block has settled yet.
  const open = turn.steps.findLastIndex((s) => s.nodeId === block.node_id && s.summary === undefined)
  let steps = turn.steps
  let index = open
  if (index < 0 || (block.status === 'started' && turn.steps[index].startedAt !== null)) {
    steps = [...steps, blankStep(steps, block.node_id, block.node_name, block.node_type)]
    index = steps.length - 1
  }
  const step: Step = { ...steps[index], nodeName: block.node_name ?? block.node_id, nodeType: block.node_type ?? '' }
  const detail = (block.detail ?? {}) as Record<string, unknown>
  if (block.status === 'started') {
    step.startedAt = step.startedAt ?? now
    step.status = step.status === 'waiting' ? 'waiting' : 'running'
  } else {
    step.status = BLOCK_STATUS[block.status]
    step.summary = block.summary
    step.durationMs = block.duration_ms ?? null
    step.finishedAt = now
    step.waiting = undefined
    if (detail.outputs && typeof detail.outputs === 'object') step.outputs = detail.outputs as Record<string, unknown>
    if (block.status === 'error') {
      step.error = { message: block.summary, code: (detail.error as { code?: string } | undefined)?.code }
    }
    if (block.status === 'skipped') step.reason = typeof detail.reason === 'string' ? detail.reason : block.summary
  }
  return { ...turn, steps: steps.map((s, i) => (i === index ? step : s)) }
}

/** The turn's cards after the complete list of its flow_step blocks (the ChatReply's
 * `steps`, or GET /api/runs/{id}/steps): blocks already applied are not applied again. */
export function applyFlowSteps(turn: Turn, blocks: FlowStep[]): Turn {
  const settled = (s: Step) => s.summary !== undefined
  let next = turn
  const seen: Record<string, number> = {}
  for (const block of blocks) {
    const n = seen[block.node_id] ?? 0
    seen[block.node_id] = n + 1
    const mine = next.steps.filter((s) => s.nodeId === block.node_id)[n]
    if (mine && settled(mine)) continue
    if (mine && block.status === 'started') continue
    next = applyFlowStep(next, block)
  }
  return next
}

/** Steps still running or waiting when the run ended: they were cancelled. */
function stopped(steps: Step[], reason: string): Step[] {
  return steps.map((s) =>
    s.status === 'running' || s.status === 'waiting' ? { ...s, status: 'skipped', reason, waiting: undefined } : s,
  )
}

function waitingOf(raw: Record<string, unknown>): Waiting {
  return {
    nodeId: str(raw.node_id),
    nodeName: str(raw.node_name) || str(raw.node_id),
    kind: str(raw.kind) || 'input',
    prompt: str(raw.prompt),
    value: raw.value,
    fields: Array.isArray(raw.fields) ? (raw.fields as Waiting['fields']) : undefined,
  }
}

function toolsAfter(tools: ToolCall[], data: Record<string, unknown>): ToolCall[] {
  const tool = str(data.tool)
  const agent = str(data.agent)
  const member = tools.findLastIndex((t) => t.kind === 'member' && t.tool === agent && t.status === 'running')
  if (data.event === 'MemberRunStarted') {
    return [...tools, { key: `${tools.length}`, kind: 'member', tool: agent, agent, arguments: undefined, result: '', status: 'running' }]
  }
  if (data.event === 'RunContent' && member >= 0) {
    return tools.map((t, i) => (i === member ? { ...t, result: (t.result ?? '') + str(data.content) } : t))
  }
  if (data.event === 'MemberRunCompleted') {
    const done = (t: ToolCall): ToolCall => ({ ...t, status: 'done', result: str(data.content) || t.result })
    return member >= 0
      ? tools.map((t, i) => (i === member ? done(t) : t))
      : [...tools, done({ key: `${tools.length}`, kind: 'member', tool: agent, agent, arguments: undefined, status: 'done' })]
  }
  if (data.event === 'ToolCallStarted') {
    return [
      ...tools,
      {
        key: `${tools.length}`,
        kind: 'tool',
        tool,
        agent: (data.agent as string | undefined) ?? null,
        arguments: data.arguments,
        status: 'running',
        callId: (data.tool_call_id as string | undefined) ?? null,
      },
    ]
  }
  if (data.event === 'ToolCallProgress') {
    // A Flow Tool's child run: one of its events, under the call that started it.
    const callId = (data.tool_call_id as string | undefined) ?? null
    const at = tools.findIndex((t) => t.kind === 'tool' && (callId ? t.callId === callId : t.tool === tool && t.status === 'running'))
    if (at < 0) return tools
    const line = [str(data.node_name), str(data.child_event)].filter(Boolean).join(': ')
    return tools.map((t, i) =>
      i === at ? { ...t, childRunId: str(data.child_run_id) || t.childRunId, progress: [...(t.progress ?? []), line] } : t,
    )
  }
  if (data.event === 'ToolCallCompleted') {
    const callId = (data.tool_call_id as string | undefined) ?? null
    const at = tools.findIndex(
      (t) => t.kind === 'tool' && t.status === 'running' && t.tool === tool && (!callId || !t.callId || t.callId === callId),
    )
    const done: ToolCall = {
      ...(at >= 0 ? tools[at] : {}),
      key: at >= 0 ? tools[at].key : `${tools.length}`,
      kind: 'tool',
      tool,
      agent: (data.agent as string | undefined) ?? null,
      arguments: data.arguments,
      result: (data.result as string | null | undefined) ?? null,
      error: data.error === true,
      status: data.error === true ? 'failed' : 'done',
    }
    return at >= 0 ? tools.map((t, i) => (i === at ? done : t)) : [...tools, done]
  }
  return tools
}

/** The ChatReply frame/answer of POST /api/flows/{id}/chat. */
export interface ChatReply {
  chat_id: string
  run_id: string
  status: 'completed' | 'paused' | 'failed' | 'cancelled'
  answer: string | null
  usage: Record<string, number> | null
  waiting: { node_id: string; node_name: string; kind: string }[]
  error: Record<string, unknown> | null
  run_url: string
  events_url: string
  /** The turn's flow_step blocks (none when Chat Start's showFlowSteps is off). */
  steps?: FlowStep[]
}

export function applyReply(turn: Turn, reply: ChatReply): Turn {
  const withSteps = reply.steps?.length ? applyFlowSteps(turn, reply.steps) : turn
  const next: Turn = { ...withSteps, runId: reply.run_id, status: reply.status, usage: reply.usage ?? turn.usage }
  if (reply.answer !== null && reply.answer !== undefined) next.answer = reply.answer
  if (reply.status === 'failed' && reply.error) next.error = errorOf(reply.error)
  if (reply.status === 'paused' && next.waiting.length === 0) {
    next.waiting = reply.waiting.map((w) => waitingOf({ ...w }))
  }
  return next
}
