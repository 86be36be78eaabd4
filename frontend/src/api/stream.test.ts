import { afterEach, describe, expect, it, vi } from 'vitest'
import { SseParser, followRunEvents, streamSse } from './stream'

function feedAll(parser: SseParser, chunks: string[]) {
  return chunks.flatMap((chunk) => parser.feed(chunk))
}

const FRAME = 'id: 3\nevent: FlowNodeCompleted\ndata: {"seq":3}\n\n'

describe('SseParser', () => {
  it('parses id, event and data', () => {
    const frames = new SseParser().feed(FRAME)
    expect(frames).toEqual([{ id: '3', event: 'FlowNodeCompleted', data: '{"seq":3}' }])
  })

  it('gives the same frames whatever the chunking, even mid-line and mid-CRLF', () => {
    const text = 'retry: 2000\r\n\r\nid: 1\r\nevent: run_started\r\ndata: {"a":1}\r\n\r\n' + FRAME
    const whole = new SseParser().feed(text)
    for (let size = 1; size < 12; size++) {
      const chunks: string[] = []
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size))
      expect(feedAll(new SseParser(), chunks)).toEqual(whole)
    }
    expect(whole.map((f) => f.event)).toEqual(['run_started', 'FlowNodeCompleted'])
  })

  it('splits a frame between chunks mid-line', () => {
    const parser = new SseParser()
    expect(parser.feed('id: 7\nevent: RunCon')).toEqual([])
    expect(parser.feed('tent\ndata: {"tok')).toEqual([])
    expect(parser.feed('en":"hi"}\n')).toEqual([])
    expect(parser.feed('\n')).toEqual([{ id: '7', event: 'RunContent', data: '{"token":"hi"}' }])
  })

  it('joins multi-line data with newlines', () => {
    const frames = new SseParser().feed('data: first\ndata:second\ndata:  third\n\n')
    expect(frames).toEqual([{ id: null, event: 'message', data: 'first\nsecond\n third' }])
  })

  it('ignores comments (keepalives) and counts them', () => {
    const parser = new SseParser()
    const frames = parser.feed(': keepalive\n\n:another\ndata: x\n\n')
    expect(frames).toEqual([{ id: null, event: 'message', data: 'x' }])
    expect(parser.comments).toBe(2)
  })

  it('keeps the last id and reads retry; a frame without data is not dispatched', () => {
    const parser = new SseParser()
    expect(parser.feed('retry: 1500\n\nid: 4\n\n')).toEqual([])
    expect(parser.retry).toBe(1500)
    expect(parser.lastEventId).toBe('4')
    expect(parser.feed('event: x\ndata: y\n\n')).toEqual([{ id: '4', event: 'x', data: 'y' }])
    parser.feed('retry: soon\n\n')
    expect(parser.retry).toBe(1500)
  })

  it('drops an unterminated frame at the end', () => {
    const parser = new SseParser()
    expect(parser.feed('data: half')).toEqual([])
    expect(parser.end()).toEqual([])
    expect(parser.feed('data: next\n\n')).toEqual([{ id: null, event: 'message', data: 'next' }])
  })

  it('handles a field without a colon and a value with colons', () => {
    const frames = new SseParser().feed('data\ndata: a: b\n\n')
    expect(frames[0].data).toBe('\na: b')
  })
})

function bodyOf(chunks: string[], fail = false): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let i = 0
  return new ReadableStream({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(encoder.encode(chunks[i++]))
      else if (fail) controller.error(new TypeError('network error'))
      else controller.close()
    },
  })
}

function event(seq: number, type: string) {
  return `id: ${seq}\nevent: ${type}\ndata: ${JSON.stringify({ seq, run_id: 'r', event_type: type, node_id: null, data: {} })}\n\n`
}

describe('streamSse and followRunEvents', () => {
  afterEach(() => vi.unstubAllGlobals())

  it('throws ApiError with the server message', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => new Response(JSON.stringify({ error: { code: 'not_found', message: 'no run x' } }), { status: 404 })),
    )
    await expect(streamSse('/api/runs/x/events', () => {})).rejects.toThrow('no run x')
  })

  it('reconnects with Last-Event-ID after a drop, without gaps or duplicates', async () => {
    const calls: (Record<string, string> | undefined)[] = []
    const answers = [
      () => new Response(bodyOf(['retry: 1\n\n', event(1, 'run_started'), event(2, 'started').slice(0, 10)], true)),
      // the server resends from after Last-Event-ID; a duplicate is ignored anyway
      () => new Response(bodyOf([event(1, 'run_started'), event(2, 'started'), event(3, 'run_completed')])),
    ]
    vi.stubGlobal(
      'fetch',
      vi.fn(async (_url: string, init: RequestInit) => {
        calls.push(init.headers as Record<string, string>)
        return answers.shift()!()
      }),
    )
    const seen: number[] = []
    const final = await followRunEvents('r', (e) => seen.push(e.seq))
    expect(seen).toEqual([1, 2, 3])
    expect(final?.event_type).toBe('run_completed')
    expect(calls[0]?.['Last-Event-ID']).toBeUndefined()
    expect(calls[1]?.['Last-Event-ID']).toBe('1')
  })
})
