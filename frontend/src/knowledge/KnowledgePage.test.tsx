import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { sourceOf } from './api'
import { KnowledgePage } from './KnowledgePage'

const json = (body: unknown, status = 200) => new Response(body === undefined ? null : JSON.stringify(body), { status })
let collections = [{ name: 'orbit', model: 'local:all-minilm-l6-v2', dimension: 384, chunks: 34, sources: 12 }]
const calls: { url: string; method: string; body: unknown }[] = []

beforeEach(() => {
  calls.length = 0
  collections = [{ name: 'orbit', model: 'local:all-minilm-l6-v2', dimension: 384, chunks: 34, sources: 12 }]
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit = {}) => {
      const method = init.method ?? 'GET'
      const body = init.body ? JSON.parse(String(init.body)) : undefined
      calls.push({ url, method, body })
      if (url === '/api/knowledge/collections') return json({ collections })
      if (url === '/api/knowledge/collections/orbit/search')
        return json({
          hits: [
            {
              id: 'chk_1',
              text: 'Shipping is free on orders of 45 dollars or more.',
              score: 0.0328,
              metadata: { source: 'docs/shipping.md', headings: ['Shipping', 'Costs'] },
            },
          ],
          context: '[1] ...',
        })
      if (url === '/api/knowledge/collections/orbit' && method === 'DELETE') {
        collections = []
        return new Response(null, { status: 204 })
      }
      return json({ error: { message: 'no' } }, 404)
    }),
  )
})

afterEach(() => {
  cleanup()
  vi.unstubAllGlobals()
})

describe('KnowledgePage', () => {
  it('lists the collections and searches the selected one, showing each hit with its source', async () => {
    render(<KnowledgePage />)
    await screen.findByRole('button', { name: 'orbit' })
    expect(screen.getByText('local:all-minilm-l6-v2 (384)')).toBeTruthy()
    fireEvent.change(screen.getByLabelText('Search query'), { target: { value: 'Is shipping free?' } })
    fireEvent.change(screen.getByLabelText('Search mode'), { target: { value: 'keyword' } })
    fireEvent.click(screen.getByRole('button', { name: 'Search' }))
    const hits = await screen.findByRole('list', { name: 'Hits' })
    expect(within(hits).getByText('docs/shipping.md › Shipping › Costs')).toBeTruthy()
    expect(within(hits).getByText(/45 dollars/)).toBeTruthy()
    const search = calls.find((c) => c.url.endsWith('/search'))
    expect(search?.body).toEqual({ query: 'Is shipping free?', mode: 'keyword', top_k: 5 })
  })

  it('drops a collection only after confirming', async () => {
    render(<KnowledgePage />)
    fireEvent.click(await screen.findByRole('button', { name: 'Drop orbit' }))
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false)
    fireEvent.click(screen.getByRole('button', { name: 'Drop' }))
    await screen.findByText(/No collection yet/)
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.url)).toEqual(['/api/knowledge/collections/orbit'])
  })

  it('refuses an unsupported file before sending it', async () => {
    render(<KnowledgePage />)
    await screen.findByRole('button', { name: 'orbit' })
    // The upload box takes the selected collection's name in an effect, a render later.
    await waitFor(() => expect(screen.getByLabelText<HTMLInputElement>('Collection name').value).toBe('orbit'))
    const input = screen.getByLabelText('Files to upload')
    fireEvent.change(input, { target: { files: [new File(['MZ'], 'tool.exe')] } })
    expect((await screen.findByRole('status')).textContent).toContain('Not a supported file: tool.exe')
  })
})

describe('sourceOf', () => {
  it('names the file, the page and the heading path', () => {
    expect(sourceOf({ id: 'x', text: '', score: 0, metadata: { source: 'a.pdf', page: 3, headings: ['A', 'B'] } })).toBe(
      'a.pdf p.3 › A › B',
    )
  })
})
