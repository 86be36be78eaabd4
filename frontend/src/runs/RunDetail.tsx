// One run (#/runs/<id>): its header and actions, then each node execution with its inputs
// and outputs, re-run from a node, pin a node's output into the flow.

import { useCallback, useEffect, useState } from 'react'
import { api } from '../api/client'
import { followRunEvents } from '../api/stream'
import type { FlowVersion, RunRecord } from '../api/models'
import { hrefOf, navigate } from '../app/route'
import { FileRefs } from '../components/FileRefs'
import { type ChildRunLink, RunLinks } from './RunLinks'
import { JsonView } from '../components/JsonView'
import { formatDuration, formatTime } from '../components/time'
import type { Waiting } from '../components/waiting'
import { ApprovalCard, InputCard } from '../components/WaitingCards'
import { pinOutputs, pinnedOf, unpinOutputs } from './pin'

export interface TimelineEntry {
  node_id: string
  execution: number
  node_name: string
  node_type: string
  status: string
  inputs: Record<string, unknown> | null
  outputs: Record<string, unknown> | null
  error: Record<string, unknown> | null
  attempts: number
  usage: Record<string, number> | null
  started_at: string | null
  finished_at: string | null
}

export type RunWithTimeline = RunRecord & {
  timeline: TimelineEntry[]
  error: Record<string, unknown> | null
  rerun_of: string | null
  rerun_from: string | null
  usage: Record<string, number> | null
  parent_run_id?: string | null
  parent_node?: string | null
  children?: ChildRunLink[]
}

function msBetween(start: string | null, end: string | null): number | null {
  if (!start || !end) return null
  return new Date(end).getTime() - new Date(start).getTime()
}

export function RunDetail({ runId }: { runId: string }) {
  const [run, setRun] = useState<RunWithTimeline | null>(null)
  const [flow, setFlow] = useState<FlowVersion | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [waiting, setWaiting] = useState<Waiting[]>([])

  const load = useCallback(async () => {
    try {
      const record = await api<RunWithTimeline>(`/api/runs/${encodeURIComponent(runId)}`)
      setRun(record)
      setError(null)
      return record
    } catch (e) {
      setError((e as Error).message)
      return null
    }
  }, [runId])

  const loadFlow = useCallback(async (flowId: string) => {
    try {
      setFlow(await api<FlowVersion>(`/api/flows/${encodeURIComponent(flowId)}`))
    } catch {
      setFlow(null)
    }
  }, [])

  useEffect(() => {
    void load().then((record) => {
      if (record?.flow_id) void loadFlow(record.flow_id)
    })
  }, [load, loadFlow])

  // A live run: refresh until it ends.
  const status = run?.status
  useEffect(() => {
    if (status !== 'running') return
    const timer = setInterval(() => void load(), 1500)
    return () => clearInterval(timer)
  }, [status, load])

  // A paused run: what its waiting nodes asked (its last run_paused event lists them).
  const lastSeq = typeof run?.last_seq === 'number' ? run.last_seq : 0
  useEffect(() => {
    if (status !== 'paused') {
      setWaiting([])
      return
    }
    const controller = new AbortController()
    let list: Waiting[] = []
    followRunEvents(
      runId,
      (event) => {
        if (event.event_type === 'run_paused' && Array.isArray(event.data.waiting)) {
          list = (event.data.waiting as Record<string, unknown>[]).map((w) => ({
            nodeId: String(w.node_id ?? ''),
            nodeName: String(w.node_name ?? w.node_id ?? ''),
            kind: String(w.kind ?? 'input'),
            prompt: String(w.prompt ?? ''),
            value: w.value,
            fields: Array.isArray(w.fields) ? (w.fields as Waiting['fields']) : undefined,
          }))
        }
      },
      { signal: controller.signal, maxRetries: 0 },
    )
      .then(() => setWaiting(list))
      .catch(() => setWaiting([]))
    return () => controller.abort()
  }, [status, runId, lastSeq])

  const act = async (what: string, action: () => Promise<void>) => {
    setBusy(true)
    setNotice(null)
    try {
      await action()
    } catch (e) {
      setNotice(`${what}: ${(e as Error).message}`)
    } finally {
      setBusy(false)
    }
  }

  const cancel = () =>
    act('Cancel', async () => {
      await api(`/api/runs/${encodeURIComponent(runId)}/cancel`, { method: 'POST' })
      await load()
    })

  const resume = (answers: Record<string, unknown> = {}) =>
    api(`/api/runs/${encodeURIComponent(runId)}/resume`, { method: 'POST', json: { answers } }).then(async () => {
      await load()
    })

  const rerun = (nodeId: string) =>
    act('Re-run', async () => {
      const started = await api<{ run_id: string }>(`/api/runs/${encodeURIComponent(runId)}/rerun`, {
        method: 'POST',
        json: { from_node: nodeId },
      })
      navigate({ page: 'runs', runId: started.run_id })
    })

  const pin = (entry: TimelineEntry, on: boolean) =>
    act(on ? 'Pin' : 'Unpin', async () => {
      if (!run?.flow_id) return
      const saved = on
        ? await pinOutputs(run.flow_id, entry.node_id, entry.outputs ?? {})
        : await unpinOutputs(run.flow_id, entry.node_id)
      setFlow(saved)
      setNotice(on ? `Pinned ${entry.node_name}'s output in v${saved.version}` : `Unpinned ${entry.node_name} in v${saved.version}`)
    })

  if (error && !run) {
    return (
      <main className="runs-page">
        <p>
          <a href={hrefOf({ page: 'runs', runId: null })}>← Runs</a>
        </p>
        <p className="banner error" role="alert">
          {error}
        </p>
      </main>
    )
  }
  if (!run) return <main className="runs-page muted">Loading run…</main>

  const runError = run.error as { message?: string; node_name?: string; node_id?: string } | null
  const canCancel = run.status === 'queued' || run.status === 'running' || run.status === 'paused' || run.status === 'interrupted'
  const ended = run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled'
  const lastIndex = new Map<string, number>()
  run.timeline.forEach((entry, index) => lastIndex.set(entry.node_id, index))

  return (
    <main className="runs-page run-detail">
      <p className="crumbs">
        <a href={hrefOf({ page: 'runs', runId: null })}>← Runs</a>
      </p>
      <header className="run-header">
        <div className="run-title">
          <span className={`run-badge status-${run.status}`} data-testid="run-status">
            {run.status}
          </span>
          <h1>{flow?.name ?? run.flow_id ?? 'Run'}</h1>
          {run.flow_version !== null && <span className="muted">v{run.flow_version}</span>}
          <span className="mono muted" title={run.id}>
            {run.id}
          </span>
        </div>
        <div className="run-actions">
          {run.flow_id && <a href={hrefOf({ page: 'editor', flowId: run.flow_id })}>Open flow</a>}
          <button type="button" onClick={() => void load()}>
            Refresh
          </button>
          {run.status === 'paused' && (
            <button
              type="button"
              className="primary"
              disabled={busy || waiting.length === 0}
              title="Answer the waiting nodes below"
              onClick={() => document.querySelector<HTMLElement>('.run-waiting input, .run-waiting textarea')?.focus()}
            >
              Resume
            </button>
          )}
          {run.status === 'interrupted' && (
            <button type="button" className="primary" disabled={busy} onClick={() => void act('Resume', () => resume())}>
              Resume
            </button>
          )}
          {canCancel && (
            <button type="button" className="danger" disabled={busy} onClick={() => void cancel()}>
              Cancel
            </button>
          )}
        </div>
      </header>
      <dl className="run-facts">
        <div>
          <dt>Created</dt>
          <dd title={run.created_at}>{formatTime(run.created_at)}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd title={run.started_at ?? ''}>{formatTime(run.started_at)}</dd>
        </div>
        <div>
          <dt>Finished</dt>
          <dd title={run.finished_at ?? ''}>{formatTime(run.finished_at)}</dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{run.duration_ms !== null ? formatDuration(run.duration_ms) : '—'}</dd>
        </div>
        <div>
          <dt>Chat</dt>
          <dd className="mono">{run.chat_id ?? '—'}</dd>
        </div>
        {run.usage && Object.keys(run.usage).length > 0 && (
          <div>
            <dt>Usage</dt>
            <dd>
              {Object.entries(run.usage)
                .map(([k, v]) => `${v} ${k.replace(/_/g, ' ')}`)
                .join(' · ')}
            </dd>
          </div>
        )}
        {run.rerun_of && (
          <div>
            <dt>Re-run of</dt>
            <dd>
              <a href={hrefOf({ page: 'runs', runId: run.rerun_of })} className="mono">
                {run.rerun_of.slice(0, 8)}
              </a>{' '}
              from {run.rerun_from}
            </dd>
          </div>
        )}
      </dl>
      <RunLinks parentRunId={run.parent_run_id} parentNode={run.parent_node} children={run.children} />
      {run.rerun_of && (
        <p className="muted small rerun-note">
          A re-run from {run.rerun_from}: the nodes before it took their outputs from the original run and are not
          listed below.
        </p>
      )}
      {run.trigger !== null && run.trigger !== undefined && (
        <section className="run-trigger">
          <h2>Trigger</h2>
          <FileRefs value={run.trigger} runId={run.id} testId="run-trigger-files" />
          <JsonView value={run.trigger} testId="run-trigger" label="trigger" />
        </section>
      )}
      {runError && run.status === 'failed' && (
        <div className="banner error" role="alert">
          <strong>{runError.node_name ? `Node “${runError.node_name}” failed: ` : 'The run failed: '}</strong>
          {runError.message ?? JSON.stringify(runError)}
        </div>
      )}
      {notice && (
        <p className="run-notice" role="status">
          {notice}
        </p>
      )}
      {run.status === 'paused' && waiting.length > 0 && (
        <section className="run-waiting" aria-label="Waiting nodes">
          <h2>Waiting</h2>
          <div className="waiting-cards">
            {waiting.map((w) =>
              w.kind === 'approval' ? (
                <ApprovalCard key={w.nodeId} waiting={w} disabled={busy} onAnswer={(id, value) => resume({ [id]: value })} />
              ) : (
                <InputCard key={w.nodeId} waiting={w} disabled={busy} onAnswer={(id, value) => resume({ [id]: value })} />
              ),
            )}
          </div>
        </section>
      )}
      <section className="timeline" aria-label="Timeline">
        <h2>Timeline</h2>
        {run.timeline.length === 0 && <p className="muted">No node has run.</p>}
        <ol>
          {run.timeline.map((entry, index) => {
            const suffix = entry.execution > 1 ? `-${entry.execution}` : ''
            const nested = entry.node_id.includes('/')
            const pinned = flow ? pinnedOf(flow.document, entry.node_id) : undefined
            const duration = msBetween(entry.started_at, entry.finished_at)
            const entryError = entry.error as { message?: string; code?: string } | null
            return (
              <li
                key={`${entry.node_id}#${entry.execution}#${index}`}
                className="node-exec"
                data-testid="timeline-entry"
                data-node-id={entry.node_id}
                data-status={entry.status}
              >
                <div className="node-exec-head">
                  <span className={`step-dot status-${dotOf(entry.status)}`} aria-hidden="true" />
                  <strong className="node-name">{entry.node_name}</strong>
                  <span className="muted small">{entry.node_type}</span>
                  <span className={`run-badge status-${dotOf(entry.status)}`}>{entry.status}</span>
                  <span className="muted small" title={entry.started_at ?? ''}>
                    {formatTime(entry.started_at)}
                  </span>
                  <span className="small num">{duration !== null ? formatDuration(duration) : ''}</span>
                  <span className="muted small">
                    {entry.execution > 1 ? `execution ${entry.execution} · ` : ''}
                    attempt{entry.attempts === 1 ? '' : 's'} {entry.attempts}
                  </span>
                  <span className="node-exec-actions">
                    {pinned && <span className="pin-badge">Pinned in v{flow?.version}</span>}
                    {ended && !nested && lastIndex.get(entry.node_id) === index && (
                      <button type="button" disabled={busy} onClick={() => void rerun(entry.node_id)}>
                        Re-run from here
                      </button>
                    )}
                    {run.flow_id && !nested && lastIndex.get(entry.node_id) === index && (pinned || entry.outputs) && (
                      <button
                        type="button"
                        disabled={busy || !flow}
                        onClick={() => void pin(entry, !pinned)}
                        title={pinned ? 'Remove the pinned output: the node runs again' : 'Save these outputs into the flow as a new version: the node will not run'}
                      >
                        {pinned ? 'Unpin' : 'Pin output'}
                      </button>
                    )}
                  </span>
                </div>
                {entryError && (
                  <p className="node-error" role={entry.status === 'failed' ? 'alert' : undefined}>
                    {entryError.code ? <code>{entryError.code}</code> : null} {entryError.message ?? JSON.stringify(entryError)}
                  </p>
                )}
                <div className="node-io">
                  <div>
                    <h3>Input</h3>
                    <JsonView value={entry.inputs ?? {}} testId={`node-input-${entry.node_id}${suffix}`} label="input" />
                  </div>
                  <div>
                    <h3>Output</h3>
                    {entry.outputs ? (
                      <>
                        <FileRefs value={entry.outputs} runId={run.id} testId={`node-files-${entry.node_id}${suffix}`} />
                        <JsonView value={entry.outputs} testId={`node-output-${entry.node_id}${suffix}`} label="output" />
                      </>
                    ) : (
                      <p className="muted small" data-testid={`node-output-${entry.node_id}${suffix}`}>
                        {entry.status === 'waiting' ? 'waiting for an answer' : 'no output'}
                      </p>
                    )}
                  </div>
                </div>
              </li>
            )
          })}
        </ol>
      </section>
    </main>
  )
}

function dotOf(status: string): string {
  if (status === 'completed') return 'done'
  return status
}
