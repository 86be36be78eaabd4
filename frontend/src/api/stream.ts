// Server-Sent Events over fetch(): EventSource cannot send the Authorization header.
// `SseParser` turns text chunks into frames (the WHATWG event-stream rules: `id:`,
// `event:`, multi-line `data:`, `retry:`, `:` comments, CR/LF/CRLF line ends split
// anywhere). `streamSse` reads one response (the POST chat stream or a GET events
// stream); `followRunEvents` follows a run's events, reconnecting with Last-Event-ID
// when the connection drops, until the run ends or pauses.

import { ApiError, authHeaders } from './client'
import type { RunEvent } from './models'

export interface SseFrame {
  /** The last event id seen (this frame's `id:` or an earlier one), or null. */
  id: string | null
  /** `event:` or `message` when the frame has none. */
  event: string
  /** The `data:` lines joined by `\n`. */
  data: string
}

export class SseParser {
  private buffer = ''
  private pendingCR = false
  private data: string[] = []
  private event = ''
  private hasData = false
  lastEventId: string | null = null
  /** The reconnection delay the server asked for (`retry:`), in ms. */
  retry: number | null = null
  /** How many comment lines (`: keepalive`) were read. */
  comments = 0

  /** Feeds a chunk of text; answers the frames it completed. */
  feed(chunk: string): SseFrame[] {
    const frames: SseFrame[] = []
    let text = chunk
    if (this.pendingCR) {
      this.pendingCR = false
      if (text.startsWith('\n')) text = text.slice(1)
    }
    this.buffer += text
    let start = 0
    for (let i = 0; i < this.buffer.length; i++) {
      const ch = this.buffer[i]
      if (ch !== '\n' && ch !== '\r') continue
      const line = this.buffer.slice(start, i)
      if (ch === '\r') {
        if (i + 1 < this.buffer.length) {
          if (this.buffer[i + 1] === '\n') i++
        } else {
          this.pendingCR = true
        }
      }
      start = i + 1
      const frame = this.line(line)
      if (frame) frames.push(frame)
    }
    this.buffer = this.buffer.slice(start)
    return frames
  }

  /** The end of the stream: an unterminated frame is dropped, as the spec says. */
  end(): SseFrame[] {
    this.buffer = ''
    this.data = []
    this.event = ''
    this.hasData = false
    return []
  }

  private line(line: string): SseFrame | null {
    if (line === '') return this.dispatch()
    if (line.startsWith(':')) {
      this.comments++
      return null
    }
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    switch (field) {
      case 'data':
        this.data.push(value)
        this.hasData = true
        break
      case 'event':
        this.event = value
        break
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value
        break
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value)
        break
    }
    return null
  }

  private dispatch(): SseFrame | null {
    const frame = this.hasData
      ? { id: this.lastEventId, event: this.event || 'message', data: this.data.join('\n') }
      : null
    this.data = []
    this.event = ''
    this.hasData = false
    return frame
  }
}

export interface StreamOptions {
  method?: string
  json?: unknown
  headers?: Record<string, string>
  signal?: AbortSignal
}

/** Opens `path` and calls `onFrame` for each frame until the response ends. An error
 * answer (not 2xx) throws `ApiError`; the parser is returned for its `lastEventId`/`retry`. */
export async function streamSse(
  path: string,
  onFrame: (frame: SseFrame) => void,
  options: StreamOptions = {},
  parser: SseParser = new SseParser(),
): Promise<SseParser> {
  const { method = 'GET', json, headers, signal } = options
  const response = await fetch(path, {
    method,
    signal,
    headers: {
      Accept: 'text/event-stream',
      ...(json !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...authHeaders(),
      ...headers,
    },
    body: json !== undefined ? JSON.stringify(json) : undefined,
  })
  if (!response.ok) {
    const text = await response.text()
    let body: { error?: Record<string, unknown> } | undefined
    try {
      body = text ? JSON.parse(text) : undefined
    } catch {
      body = undefined
    }
    if (response.status === 401) window.dispatchEvent(new Event('nodeloom:unauthorized'))
    throw new ApiError(response.status, body?.error ?? { message: text || response.statusText })
  }
  if (!response.body) throw new ApiError(response.status, { message: 'The answer has no body' })
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      for (const frame of parser.feed(decoder.decode(value, { stream: true }))) onFrame(frame)
    }
    for (const frame of parser.feed(decoder.decode())) onFrame(frame)
  } finally {
    parser.end()
    reader.releaseLock()
  }
  return parser
}

/** The event types after which the server ends a run's events stream. */
export const FINAL_EVENTS = new Set(['run_completed', 'run_failed', 'run_cancelled', 'run_paused'])

/** Parses a run event frame's data, or null for a frame that is not one. */
export function eventOf(frame: SseFrame): RunEvent | null {
  try {
    const value = JSON.parse(frame.data) as RunEvent
    return value && typeof value.seq === 'number' && typeof value.event_type === 'string' ? value : null
  } catch {
    return null
  }
}

export interface FollowOptions {
  /** The first seq wanted (default 1). */
  fromSeq?: number
  signal?: AbortSignal
  /** Reconnect attempts in a row without a new event before giving up (default 8). */
  maxRetries?: number
  /** Called before each reconnection (for a "reconnecting" hint). */
  onReconnect?: (attempt: number) => void
}

/** Follows `GET /api/runs/{id}/events` from `fromSeq`, calling `onEvent` once per event,
 * in order, reconnecting with `Last-Event-ID` when the connection drops before the run's
 * last event (`run_completed`, `run_failed`, `run_cancelled`, `run_paused`). Resolves
 * with that last event (null if the stream ended without one after the retries). */
export async function followRunEvents(
  runId: string,
  onEvent: (event: RunEvent, frame: SseFrame) => void,
  options: FollowOptions = {},
): Promise<RunEvent | null> {
  const { signal, maxRetries = 8, onReconnect } = options
  let lastSeq = (options.fromSeq ?? 1) - 1
  let retryMs = 2000
  let failures = 0
  const url = `/api/runs/${encodeURIComponent(runId)}/events`
  for (;;) {
    let final: RunEvent | null = null
    let progressed = false
    const parser = new SseParser()
    try {
      await streamSse(
        lastSeq > 0 ? url : `${url}?from_seq=1`,
        (frame) => {
          const event = eventOf(frame)
          if (!event || event.seq <= lastSeq) return
          lastSeq = event.seq
          progressed = true
          onEvent(event, frame)
          if (FINAL_EVENTS.has(event.event_type)) final = event
        },
        { signal, headers: lastSeq > 0 ? { 'Last-Event-ID': String(lastSeq) } : {} },
        parser,
      )
    } catch (error) {
      if (signal?.aborted) throw error
      if (error instanceof ApiError) throw error
    }
    if (parser.retry !== null) retryMs = parser.retry
    if (final) return final
    if (signal?.aborted) return null
    failures = progressed ? 1 : failures + 1
    if (failures > maxRetries) return null
    onReconnect?.(failures)
    await sleep(retryMs, signal)
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => {
      clearTimeout(timer)
      resolve()
    })
  })
}
