// The operations API (docs/api.md): the health checks and the worker registry.

import { ApiError, api, authHeaders } from '../api/client'
import type { HealthReport, WorkerList } from '../api/models'

/** GET /api/health: its report whether it is 200 (all pass) or 503 (some fail). */
export async function getHealth(): Promise<HealthReport> {
  const response = await fetch('/api/health', { headers: { Accept: 'application/json', ...authHeaders() } })
  const text = await response.text()
  let body: unknown
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    body = undefined
  }
  if ((response.status === 200 || response.status === 503) && isReport(body)) return body
  throw new ApiError(response.status, { message: `the health check answered HTTP ${response.status}` })
}

/** GET /api/workers: the live servers and workers, and the queue's depth. */
export async function getWorkers(): Promise<WorkerList> {
  return api<WorkerList>('/api/workers')
}

function isReport(body: unknown): body is HealthReport {
  return typeof body === 'object' && body !== null && 'checks' in body && 'failing' in body
}
