// Run history: #/runs lists the recorded runs (filters, pages), #/runs/<id> shows one.

import { useCallback, useEffect, useState } from 'react'
import { api } from '../api/client'
import type { FlowSummary, RunRecord, RunStatus } from '../api/models'
import { hrefOf, navigate } from '../app/route'
import { formatDuration, formatTime } from '../components/time'
import { Evaluations } from './Evaluations'
import { RunDetail } from './RunDetail'
import './runs.css'

export const STATUSES: RunStatus[] = ['queued', 'running', 'paused', 'completed', 'failed', 'cancelled', 'interrupted']
const PAGE = 25

export function RunHistory({ runId }: { runId: string | null }) {
  return runId ? <RunDetail key={runId} runId={runId} /> : <RunList />
}

export function useFlows() {
  const [flows, setFlows] = useState<FlowSummary[]>([])
  useEffect(() => {
    api<{ flows: FlowSummary[] }>('/api/flows')
      .then((answer) => setFlows(answer.flows))
      .catch(() => setFlows([]))
  }, [])
  return flows
}

export function runQuery(filters: { statuses: RunStatus[]; flowId: string; chatId: string; offset: number; limit: number }): string {
  const params = new URLSearchParams()
  for (const status of filters.statuses) params.append('status', status)
  if (filters.flowId) params.set('flow_id', filters.flowId)
  if (filters.chatId.trim()) params.set('chat_id', filters.chatId.trim())
  params.set('limit', String(filters.limit))
  params.set('offset', String(filters.offset))
  return `/api/runs?${params.toString()}`
}

function RunList() {
  const flows = useFlows()
  const [statuses, setStatuses] = useState<RunStatus[]>([])
  const [flowId, setFlowId] = useState('')
  const [chatId, setChatId] = useState('')
  const [offset, setOffset] = useState(0)
  const [runs, setRuns] = useState<RunRecord[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [loading, setLoading] = useState(false)

  const load = useCallback(async () => {
    setLoading(true)
    try {
      const answer = await api<{ runs: RunRecord[] }>(runQuery({ statuses, flowId, chatId, offset, limit: PAGE }))
      setRuns(answer.runs)
      setError(null)
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setLoading(false)
    }
  }, [statuses, flowId, chatId, offset])

  useEffect(() => {
    const timer = setTimeout(() => void load(), 150)
    return () => clearTimeout(timer)
  }, [load])

  // Live runs change: refresh while some are running.
  const live = runs?.some((run) => run.status === 'running') ?? false
  useEffect(() => {
    if (!live) return
    const timer = setInterval(() => void load(), 3000)
    return () => clearInterval(timer)
  }, [live, load])

  const nameOf = (id: string | null) => flows.find((flow) => flow.id === id)?.name
  const toggle = (status: RunStatus) => {
    setOffset(0)
    setStatuses(statuses.includes(status) ? statuses.filter((s) => s !== status) : [...statuses, status])
  }

  return (
    <main className="runs-page">
      <div className="page-head">
        <h1>Runs</h1>
        <button type="button" onClick={() => void load()} disabled={loading}>
          {loading ? 'Loading…' : 'Refresh'}
        </button>
      </div>
      <div className="run-filters">
        <fieldset role="group" aria-label="Status" className="status-filter">
          <legend>Status</legend>
          {STATUSES.map((status) => (
            <label key={status} className={`chip ${statuses.includes(status) ? 'on' : ''}`}>
              <input type="checkbox" checked={statuses.includes(status)} onChange={() => toggle(status)} />
              {status}
            </label>
          ))}
        </fieldset>
        <label className="filter">
          <span>Flow</span>
          <select
            aria-label="Flow"
            value={flowId}
            onChange={(event) => {
              setOffset(0)
              setFlowId(event.target.value)
            }}
          >
            <option value="">All flows</option>
            {flows.map((flow) => (
              <option key={flow.id} value={flow.id}>
                {flow.name}
              </option>
            ))}
          </select>
        </label>
        <label className="filter">
          <span>Chat id</span>
          <input
            aria-label="Chat id"
            value={chatId}
            placeholder="any"
            onChange={(event) => {
              setOffset(0)
              setChatId(event.target.value)
            }}
          />
        </label>
      </div>
      {error && (
        <p className="banner error" role="alert">
          {error}
        </p>
      )}
      <div className="table-wrap">
        <table className="run-table">
          <thead>
            <tr>
              <th scope="col">Status</th>
              <th scope="col">Flow</th>
              <th scope="col">Version</th>
              <th scope="col">Chat</th>
              <th scope="col">Started</th>
              <th scope="col">Duration</th>
              <th scope="col">Run</th>
            </tr>
          </thead>
          <tbody>
            {runs?.map((run) => (
              <tr
                key={run.id}
                data-testid="run-row"
                data-run-id={run.id}
                onClick={(event) => {
                  if ((event.target as HTMLElement).closest('a,button')) return
                  navigate({ page: 'runs', runId: run.id })
                }}
              >
                <td>
                  <span className={`run-badge status-${run.status}`}>{run.status}</span>
                </td>
                <td className="run-flow">
                  <a href={hrefOf({ page: 'runs', runId: run.id })}>{nameOf(run.flow_id) ?? run.flow_id ?? '(file)'}</a>
                  {run.rerun_of ? <span className="muted small"> re-run from {String(run.rerun_from)}</span> : null}
                  {run.parent_run_id ? (
                    <span className="muted small" data-testid="child-run" title={`started by run ${run.parent_run_id}`}>
                      {' '}
                      ↳ child of {run.parent_run_id.slice(0, 8)}
                    </span>
                  ) : null}
                </td>
                <td>{run.flow_version !== null ? `v${run.flow_version}` : '—'}</td>
                <td>
                  {run.chat_id ? (
                    <button
                      type="button"
                      className="link mono"
                      title={`Show the runs of chat ${run.chat_id}`}
                      onClick={() => {
                        setOffset(0)
                        setChatId(run.chat_id ?? '')
                      }}
                    >
                      {run.chat_id.slice(0, 8)}
                    </button>
                  ) : (
                    '—'
                  )}
                </td>
                <td title={run.started_at ?? run.created_at}>{formatTime(run.started_at ?? run.created_at)}</td>
                <td className="num">{run.duration_ms !== null ? formatDuration(run.duration_ms) : run.status === 'running' ? '…' : '—'}</td>
                <td className="mono muted">{run.id.slice(0, 8)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {runs && runs.length === 0 && <p className="empty muted">No runs{statuses.length || flowId || chatId ? ' match these filters' : ' yet'}.</p>}
      </div>
      <nav className="pager" aria-label="Pages of runs">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          Previous
        </button>
        <span className="muted">
          {runs && runs.length > 0 ? `${offset + 1}–${offset + runs.length}` : `${offset}`}
        </span>
        <button type="button" disabled={!runs || runs.length < PAGE} onClick={() => setOffset(offset + PAGE)}>
          Next
        </button>
      </nav>
      <Evaluations />
    </main>
  )
}
