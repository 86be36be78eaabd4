// Operations (#/operations): the health checks (store, queue, workers), the queue's depth
// and the live servers and workers with their load, read again every few seconds from
// GET /api/health and GET /api/workers (docs/observability.md).

import { useCallback, useEffect, useRef, useState } from 'react'
import type { HealthCheck, HealthReport, QueueInfo, WorkerInfo, WorkerList } from '../api/models'
import { formatTime } from '../components/time'
import { getHealth, getWorkers } from './api'
import './operations.css'

export const REFRESH_MS = 5000
const CHECKS = ['store', 'queue', 'workers'] as const

export function OperationsPage({ refreshMs = REFRESH_MS }: { refreshMs?: number }) {
  const [health, setHealth] = useState<HealthReport | null>(null)
  const [fleet, setFleet] = useState<WorkerList | null>(null)
  const [errors, setErrors] = useState<string[]>([])
  const [updated, setUpdated] = useState<Date | null>(null)
  const busy = useRef(false)

  const load = useCallback(async () => {
    if (busy.current) return
    busy.current = true
    try {
      const [h, w] = await Promise.allSettled([getHealth(), getWorkers()])
      const problems: string[] = []
      if (h.status === 'fulfilled') setHealth(h.value)
      else problems.push(`Health: ${(h.reason as Error).message}`)
      if (w.status === 'fulfilled') setFleet(w.value)
      else problems.push(`Workers: ${(w.reason as Error).message}`)
      setErrors(problems)
      setUpdated(new Date())
    } finally {
      busy.current = false
    }
  }, [])

  useEffect(() => {
    void load()
    const timer = window.setInterval(() => void load(), refreshMs)
    return () => window.clearInterval(timer)
  }, [load, refreshMs])

  const configured = fleet?.queue.configured ?? health?.checks.queue?.configured
  return (
    <main className="operations-page">
      <div className="operations-head">
        <h1>Operations</h1>
        <span className="muted" aria-live="polite">
          {updated ? `Updated ${updated.toLocaleTimeString()} · every ${refreshMs / 1000} s` : 'Loading…'}
        </span>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      {configured === false && (
        <p className="operations-mode" role="note">
          <strong>In-process mode (no queue).</strong> This server runs its runs itself. To spread them over
          workers, start it with <code>nodeloom serve --queue URL</code> and run <code>nodeloom worker</code> processes
          (docs/deployment.md).
        </p>
      )}
      {configured === true && (
        <p className="operations-mode" role="note">
          <strong>Queue mode.</strong> This server queues its runs for <code>nodeloom worker</code> processes.
        </p>
      )}
      {errors.map((message) => (
        <p key={message} className="banner error" role="alert">
          {message}
        </p>
      ))}
      <HealthSection report={health} />
      <QueueSection queue={fleet?.queue ?? null} />
      <WorkersSection fleet={fleet} />
    </main>
  )
}

function HealthSection({ report }: { report: HealthReport | null }) {
  return (
    <section className="operations-section" aria-labelledby="health-title">
      <h2 id="health-title">
        Health{' '}
        {report && (
          <span className={`state ${report.status === 'ok' ? 'ok' : 'failing'}`}>
            {report.status === 'ok' ? 'all checks pass' : `failing: ${report.failing.join(', ')}`}
          </span>
        )}
      </h2>
      {report === null ? (
        <p className="muted">Loading the checks…</p>
      ) : (
        <ul className="health-checks" aria-label="Health checks">
          {CHECKS.filter((name) => report.checks[name]).map((name) => {
            const check = report.checks[name]
            return (
              <li key={name} data-check={name}>
                <span className="check-name">{name}</span>
                <span className={`state ${check.ok ? 'ok' : 'failing'}`}>{check.ok ? 'ok' : 'failing'}</span>
                <span className="check-detail">{detailOf(name, check)}</span>
              </li>
            )
          })}
        </ul>
      )}
    </section>
  )
}

/** What a check's fixed codes and counts mean, for people. */
export function detailOf(name: string, check: HealthCheck): string {
  const why = check.error === 'timeout' ? 'did not answer in time' : 'cannot be reached'
  if (name === 'store') return check.ok ? 'the run store answers' : `the run store ${why}`
  if (name === 'queue') {
    if (check.configured === false) return 'no queue: in-process mode'
    return check.ok ? 'Redis answers' : `the queue's Redis ${why}`
  }
  if (name === 'workers') {
    if (check.error === 'unknown') return 'the worker registry could not be read'
    const roles = Object.entries(check.roles ?? {})
      .map(([role, count]) => `${count} ${role}${count === 1 ? '' : 's'}`)
      .join(', ')
    const live = `${check.live ?? 0} live${roles ? ` (${roles})` : ''}`
    if (check.error === 'no_worker_seen') return `${live}: no worker seen recently; start one with nodeloom worker`
    return live
  }
  return check.ok ? 'ok' : (check.error ?? 'failing')
}

function QueueSection({ queue }: { queue: QueueInfo | null }) {
  return (
    <section className="operations-section" aria-labelledby="queue-title">
      <h2 id="queue-title">Queue</h2>
      {queue === null ? (
        <p className="muted">Loading…</p>
      ) : !queue.configured ? (
        <p className="muted">No queue: runs start in this server's process.</p>
      ) : !queue.ok || !queue.depths ? (
        <p className="failing-text">The queue's depth could not be read ({queue.error ?? 'unknown'}).</p>
      ) : (
        <dl className="queue-depths" aria-label="Queue depth">
          {Object.entries(queue.depths).map(([name, depth]) => (
            <div key={name}>
              <dt>{name}</dt>
              <dd>
                {depth} waiting
              </dd>
            </div>
          ))}
        </dl>
      )}
    </section>
  )
}

function WorkersSection({ fleet }: { fleet: WorkerList | null }) {
  const workers = fleet?.workers ?? []
  const hosts = new Set(workers.map((w) => w.host)).size
  const slots = workers.reduce((sum, w) => sum + w.concurrency, 0)
  const busy = workers.filter((w) => w.concurrency > 0).reduce((sum, w) => sum + w.in_flight, 0)
  return (
    <section className="operations-section" aria-labelledby="workers-title">
      <h2 id="workers-title">Servers and workers</h2>
      {fleet === null ? (
        <p className="muted">Loading…</p>
      ) : workers.length === 0 ? (
        <p className="muted">No process seen in the last {fleet.live_seconds} s.</p>
      ) : (
        <>
          <p className="muted">
            {workers.length} process{workers.length === 1 ? '' : 'es'} on {hosts} host{hosts === 1 ? '' : 's'}
            {slots > 0 && ` · ${busy} of ${slots} worker run slots busy`} · seen in the last {fleet.live_seconds} s
          </p>
          <table className="operations-table" aria-label="Workers">
            <thead>
              <tr>
                <th>Role</th>
                <th>Host</th>
                <th>PID</th>
                <th>Runs in flight</th>
                <th>Runs done</th>
                <th>Started</th>
                <th>Last seen</th>
                <th>Id</th>
              </tr>
            </thead>
            <tbody>
              {workers.map((w) => (
                <WorkerRow key={w.id} worker={w} />
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  )
}

function WorkerRow({ worker: w }: { worker: WorkerInfo }) {
  const done = ['completed', 'failed', 'cancelled'].reduce((sum, k) => sum + (w.runs[k] ?? 0), 0)
  const counts = Object.entries(w.runs)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ')
  return (
    <tr data-role={w.role}>
      <td>{w.role}</td>
      <td className="mono">{w.host}</td>
      <td className="mono">{w.pid}</td>
      <td>
        {w.concurrency > 0 ? (
          <span className="load">
            <meter min={0} max={w.concurrency} value={w.in_flight} aria-label={`load of ${w.id}`} />
            {w.in_flight} / {w.concurrency}
          </span>
        ) : (
          w.in_flight
        )}
      </td>
      <td title={counts}>{done}</td>
      <td>{formatTime(w.started_at)}</td>
      <td>{w.stopped_at ? `stopped ${formatTime(w.stopped_at)}` : `${Math.round(w.seen_seconds_ago)} s ago`}</td>
      <td className="mono id-cell">{w.id}</td>
    </tr>
  )
}
