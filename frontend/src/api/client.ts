// Calls to the nodeloom server: JSON in and out, the bearer token, one error type.

import type { Issue } from './models'

const TOKEN_KEY = 'nodeloom.token'

export function getToken(): string | null {
  return localStorage.getItem(TOKEN_KEY)
}

export function setToken(token: string | null): void {
  if (token) localStorage.setItem(TOKEN_KEY, token)
  else localStorage.removeItem(TOKEN_KEY)
}

/** An error answer of the API: `{error: {code, message, issues?, ...}}` (docs/api.md). */
export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly issues: Issue[]
  readonly detail: Record<string, unknown>

  constructor(status: number, detail: Record<string, unknown>) {
    super(String(detail.message ?? `HTTP ${status}`))
    this.status = status
    this.code = String(detail.code ?? 'http_error')
    this.issues = (detail.issues as Issue[] | undefined) ?? []
    this.detail = detail
  }
}

export function authHeaders(): Record<string, string> {
  const token = getToken()
  return token ? { Authorization: `Bearer ${token}` } : {}
}

export async function api<T>(path: string, init: RequestInit & { json?: unknown } = {}): Promise<T> {
  const { json, headers, ...rest } = init
  const response = await fetch(path, {
    ...rest,
    headers: {
      Accept: 'application/json',
      ...(json !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...authHeaders(),
      ...headers,
    },
    body: json !== undefined ? JSON.stringify(json) : rest.body,
  })
  if (response.status === 204) return undefined as T
  const text = await response.text()
  const body = text ? JSON.parse(text) : undefined
  if (!response.ok) {
    if (response.status === 401) window.dispatchEvent(new Event('nodeloom:unauthorized'))
    throw new ApiError(response.status, body?.error ?? { message: text || response.statusText })
  }
  return body as T
}
