// How a turn's parts read: a step's one-line summary and a value as text. (Durations are
// in components/time.ts, the answers a waiting node takes in components/waiting.ts.)

import type { Step } from './model'

/** A one-line summary of a step for its card: the server's (its flow_step block) once the
 * step has settled, with what the card adds (tool calls, a person's answer); while it runs,
 * what it is doing now. */
export function summaryOf(step: Step): string {
  if (step.status === 'waiting') return step.waiting?.prompt || 'waiting for a person'
  if (step.status === 'running') {
    const busy = step.tools.filter((t) => t.status === 'running')
    if (busy.length) return busy.map((t) => (t.kind === 'member' ? `${t.tool} is working` : `calling ${t.tool}`)).join(', ')
    if (step.tokens) {
      const flat = step.tokens.replace(/\s+/g, ' ').trim()
      return flat.length > 90 ? `…${flat.slice(-89)}` : flat
    }
    return step.notes.at(-1) ?? 'running…'
  }
  if (step.status === 'failed' && step.summary === undefined) return step.error?.message ?? 'failed'
  if (step.status === 'skipped' && step.summary === undefined) return step.reason ? `skipped: ${step.reason}` : 'skipped'
  const parts: string[] = []
  if (step.pinned) parts.push('pinned output')
  const calls = step.tools.filter((t) => t.kind === 'tool').length
  if (calls) parts.push(`${calls} tool call${calls > 1 ? 's' : ''}`)
  if (step.answer !== undefined) {
    const answer = step.answer as { decision?: unknown; note?: unknown } | null
    if (answer && typeof answer === 'object' && typeof answer.decision === 'string') {
      const note = typeof answer.note === 'string' && answer.note ? ` · “${oneLine(answer.note, 60)}”` : ''
      parts.push(`${answer.decision === 'approve' ? 'approved' : 'rejected'}${note}`)
    } else {
      parts.push(`answered: ${oneLine(textOf(step.answer), 70)}`)
    }
    return parts.join(' · ')
  }
  if (step.summary !== undefined) return [step.summary, ...parts].join(' · ')
  const outputs = step.outputs ?? {}
  const ports = Object.keys(outputs)
  if (ports.length === 0) parts.push('no output')
  else {
    const first = outputs[ports[0]]
    parts.push(`${ports.length > 1 ? `${ports.join(', ')} · ` : ''}${oneLine(textOf(first))}`)
  }
  return parts.join(' · ')
}

export function textOf(value: unknown): string {
  if (typeof value === 'string') return value
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>
    for (const key of ['text', 'response', 'message']) if (typeof v[key] === 'string') return v[key] as string
  }
  return JSON.stringify(value) ?? String(value)
}

function oneLine(text: string, max = 90): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}
