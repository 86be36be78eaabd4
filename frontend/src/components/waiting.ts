// A node a paused run waits on (an Approval or a Human Input), and the answers it takes.

export interface Waiting {
  nodeId: string
  nodeName: string
  kind: string
  prompt: string
  value?: unknown
  fields?: { name: string; label?: string; type?: string; required?: boolean }[]
}

/** The answer an approval takes (docs/nodes/approval.md). */
export function approvalAnswer(decision: 'approve' | 'reject', note: string) {
  return { decision, note }
}

/** The answer a Human Input takes: free text, or its form fields by name. */
export function inputAnswer(waiting: Waiting, text: string, fields: Record<string, string | boolean>): unknown {
  if (!waiting.fields || waiting.fields.length === 0) return text
  const answer: Record<string, unknown> = {}
  for (const field of waiting.fields) {
    const raw = fields[field.name]
    if (field.type === 'boolean') answer[field.name] = raw === true
    else if (field.type === 'number') {
      if (raw !== undefined && raw !== '') answer[field.name] = Number(raw)
    } else if (raw !== undefined && raw !== '') answer[field.name] = raw
  }
  return answer
}
