// A chat turn as the panel shows it, built from the run's events (seed 003): the user's
// message, the answer growing token by token, one step card per node, what waits for a
// person, the error. Plain functions over plain data, so they are tested without a DOM.

import type { RunEvent } from '../api/models'
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
}

export interface Step {
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
  const index = next.steps.findIndex((s) => s.nodeId === event.node_id)
  const existing: Step =
    index >= 0
      ? next.steps[index]
      : {
          nodeId: event.node_id,
          nodeName: event.node_name ?? event.node_id,
          nodeType: event.node_type ?? '',
          status: 'running',
          startedAt: null,
          finishedAt: null,
          durationMs: null,
          tokens: '',
          tools: [],
          notes: [],
        }
  const step: Step = { ...existing }
  switch (event.event_type) {
    case 'started':
      step.status = 'running'
      step.startedAt = event.timestamp
      step.finishedAt = null
      step.durationMs = null
      step.error = undefined
      break
    case 'progress':
      if (typeof data.token === 'string') {
        step.tokens += data.token
        next.streamed += data.token
      } else if (typeof data.message === 'string') {
        step.notes = [...step.notes, data.message]
      } else if (data.iteration !== undefined) {
        step.notes = [...step.notes, `iteration ${String(data.iteration)}${data.of ? ` of ${String(data.of)}` : ''}`]
      } else if (data.retry && typeof data.retry === 'object') {
        const retry = data.retry as Record<string, unknown>
        step.notes = [...step.notes, `retry ${String(retry.attempt ?? '')}: ${errorOf(retry.error).message}`]
      }
      break
    case 'completed':
      step.status = 'done'
      step.finishedAt = event.timestamp
      step.outputs = (data.outputs as Record<string, unknown> | undefined) ?? {}
      step.pinned = data.pinned === true
      step.durationMs =
        typeof data.duration_ms === 'number'
          ? data.duration_ms
          : step.startedAt !== null
            ? (event.timestamp - step.startedAt) * 1000
            : null
      step.waiting = undefined
      break
    case 'error': {
      const error = errorOf(data.error)
      step.status = 'failed'
      step.finishedAt = event.timestamp
      step.error = { message: error.message, code: (data.error as { code?: string } | undefined)?.code }
      if (step.startedAt !== null) step.durationMs = (event.timestamp - step.startedAt) * 1000
      if (data.handled !== true) next.error = { message: error.message, nodeId: event.node_id, nodeName: step.nodeName }
      break
    }
    case 'skipped':
      step.status = 'skipped'
      step.reason = str(data.reason)
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
  }
  next.steps = index >= 0 ? next.steps.map((s, i) => (i === index ? step : s)) : [...next.steps, step]
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
      },
    ]
  }
  if (data.event === 'ToolCallCompleted') {
    const at = tools.findIndex((t) => t.kind === 'tool' && t.status === 'running' && t.tool === tool)
    const done: ToolCall = {
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
}

export function applyReply(turn: Turn, reply: ChatReply): Turn {
  const next: Turn = { ...turn, runId: reply.run_id, status: reply.status, usage: reply.usage ?? turn.usage }
  if (reply.answer !== null && reply.answer !== undefined) next.answer = reply.answer
  if (reply.status === 'failed' && reply.error) next.error = errorOf(reply.error)
  if (reply.status === 'paused' && next.waiting.length === 0) {
    next.waiting = reply.waiting.map((w) => waitingOf({ ...w }))
  }
  return next
}
