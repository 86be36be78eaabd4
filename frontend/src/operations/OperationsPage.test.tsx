import { cleanup, render, screen, waitFor, within } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { HealthReport, WorkerList } from '../api/models'
import { OperationsPage, detailOf } from './OperationsPage'

let health: { status: number; body: HealthReport }
let workers: WorkerList
let workersStatus = 200
const calls: { url: string; auth: string | null }[] = []

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status })

const worker = (over: Partial<WorkerList['workers'][number]>): WorkerList['workers'][number] => ({
  id: 'worker-box-11-abcdef',
  role: 'worker',
  host: 'box',
  pid: 11,
  concurrency: 10,
  in_flight: 3,
  started_at: '2026-11-25T10:00:00Z',
  last_seen: '2026-11-25T10:05:00Z',
  seen_seconds_ago: 2.4,
  stopped_at: null,
  runs: { started: 9, completed: 5, failed: 1 },
  ...over,
})

const inProcess = (): void => {
  health = {
    status: 200,
    body: {
      status: 'ok',
      failing: [],
      checks: {
        store: { ok: true },
        queue: { ok: true, configured: false },
        workers: { ok: true, live: 1, roles: { server: 1 } },
      },
    },
  }
  workers = {
    workers: [worker({ id: 'server-web-7-000001', role: 'server', host: 'web', pid: 7, concurrency: 0, in_flight: 1 })],
    queue: { configured: false, ok: true, error: null, depths: null },
    live_seconds: 15,
  }
}

beforeEach(() => {
  inProcess()
  workersStatus = 200
  calls.length = 0
  localStorage.setItem('nodeloom.token', 'tok')
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit = {}) => {
      const headers = (init.headers ?? {}) as Record<string, string>
      calls.push({ url, auth: headers.Authorization ?? null })
      if (url === '/api/health') return json(health.body, health.status)
      if (url === '/api/workers') {
        return workersStatus === 200 ? json(workers) : json({ error: { message: 'invalid token' } }, workersStatus)
      }
      return json({ error: { message: 'no' } }, 404)
    }),
  )
})

afterEach(() => {
  cleanup()
  vi.unstubAllGlobals()
  localStorage.clear()
})

describe('OperationsPage', () => {
  it('says in-process mode when the server has no queue, and lists the server itself', async () => {
    render(<OperationsPage />)
    expect(await screen.findByText('In-process mode (no queue).')).toBeTruthy()
    const checks = screen.getByRole('list', { name: 'Health checks' })
    const queue = within(checks).getByText('queue').closest('li')!
    expect(queue.textContent).toContain('ok')
    expect(queue.textContent).toContain('no queue: in-process mode')
    expect(screen.getByText("No queue: runs start in this server's process.")).toBeTruthy()
    const row = within(screen.getByRole('table', { name: 'Workers' })).getByText('server').closest('tr')!
    expect(row.textContent).toContain('web')
    expect(row.textContent).toContain('2 s ago')
    expect(calls.find((c) => c.url === '/api/workers')?.auth).toBe('Bearer tok')
  })

  it('shows failing checks with their detail, the queue depth and each worker load', async () => {
    health = {
      status: 503,
      body: {
        status: 'failing',
        failing: ['queue', 'workers'],
        checks: {
          store: { ok: true },
          queue: { ok: false, configured: true, error: 'timeout' },
          workers: { ok: false, live: 1, roles: { server: 1 }, error: 'no_worker_seen' },
        },
      },
    }
    workers = {
      workers: [worker({}), worker({ id: 'worker-box-12-abcdef', pid: 12, in_flight: 0 })],
      queue: { configured: true, ok: true, error: null, depths: { nodeloom: 4 } },
      live_seconds: 15,
    }
    render(<OperationsPage />)
    expect(await screen.findByText('failing: queue, workers')).toBeTruthy()
    expect(screen.getByText('Queue mode.')).toBeTruthy()
    expect(screen.queryByText('In-process mode (no queue).')).toBeNull()
    const checks = screen.getByRole('list', { name: 'Health checks' })
    const queue = within(checks).getByText('queue').closest('li')!
    expect(queue.textContent).toContain('failing')
    expect(queue.textContent).toContain("the queue's Redis did not answer in time")
    expect(within(checks).getByText('workers').closest('li')!.textContent).toContain('no worker seen recently')
    expect(screen.getByRole('definition').textContent).toBe('4 waiting')
    expect(screen.getByText(/2 processes on 1 host · 3 of 20 worker run slots busy/)).toBeTruthy()
    const busy = screen.getByLabelText('load of worker-box-11-abcdef') as HTMLMeterElement
    expect(busy.value).toBe(3)
    expect(busy.max).toBe(10)
    expect(busy.closest('tr')!.textContent).toContain('3 / 10')
    expect(busy.closest('tr')!.textContent).toContain('6') // runs done: 5 completed + 1 failed
  })

  it('reads both endpoints again on its own and shows a new worker', async () => {
    render(<OperationsPage refreshMs={40} />)
    await screen.findByText('In-process mode (no queue).')
    expect(screen.queryByText('worker-box-11-abcdef')).toBeNull()
    workers = { ...workers, workers: [...workers.workers, worker({})] }
    expect(await screen.findByText('worker-box-11-abcdef')).toBeTruthy()
    expect(calls.filter((c) => c.url === '/api/health').length).toBeGreaterThanOrEqual(2)
  })

  it('keeps the health checks when the workers list is refused and says why', async () => {
    workersStatus = 401
    render(<OperationsPage />)
    expect(await screen.findByRole('alert')).toHaveProperty('textContent', 'Workers: invalid token')
    await waitFor(() => expect(screen.getByRole('list', { name: 'Health checks' })).toBeTruthy())
  })
})

describe('detailOf', () => {
  it('turns the fixed codes into sentences', () => {
    expect(detailOf('store', { ok: false, error: 'unreachable' })).toBe('the run store cannot be reached')
    expect(detailOf('workers', { ok: true, live: 3, roles: { server: 1, worker: 2 } })).toBe(
      '3 live (1 server, 2 workers)',
    )
    expect(detailOf('workers', { ok: false, error: 'unknown', live: null })).toBe(
      'the worker registry could not be read',
    )
  })
})
