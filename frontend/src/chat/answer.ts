// The answer of a run the chat resumed (no ChatReply then): what the server's chat answer
// is (server/chat.py `answer`): the run's result if a node set one, else the main output
// of each end node (no edge leaves it) that ran, as text, blank-line separated.

import { api } from '../api/client'
import type { FlowVersion, RunRecord } from '../api/models'
import { useCatalogue, definitionOf } from '../state/catalogue'
import { textOf } from './format'

interface TimelineEntry {
  node_id: string
  status: string
  outputs: Record<string, unknown> | null
}

export async function answerOfRun(runId: string): Promise<string | null> {
  const run = await api<RunRecord & { timeline?: TimelineEntry[]; result?: unknown }>(
    `/api/runs/${encodeURIComponent(runId)}`,
  )
  if (run.result !== undefined && run.result !== null) return textOf(run.result)
  if (!run.flow_id) return null
  const version = await api<FlowVersion>(
    `/api/flows/${encodeURIComponent(run.flow_id)}?version=${run.flow_version ?? ''}`,
  )
  const catalogue = useCatalogue.getState().catalogue
  const sources = new Set(version.document.edges.map((e) => e.source))
  const parts: string[] = []
  for (const node of version.document.nodes) {
    if (sources.has(node.id)) continue
    const main = catalogue ? definitionOf(catalogue, node.type)?.main_output : undefined
    const entry = [...(run.timeline ?? [])].reverse().find((t) => t.node_id === node.id && t.outputs)
    if (!entry?.outputs) continue
    const port = main && main in entry.outputs ? main : Object.keys(entry.outputs)[0]
    if (port !== undefined) parts.push(textOf(entry.outputs[port]))
  }
  return parts.length ? parts.join('\n\n') : null
}
