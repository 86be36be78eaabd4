import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Settings } from './Settings'

let credentials: { name: string; created_at: string; updated_at: string }[] = []
let tokens: { id: string; name: string; created_at: string }[] = []
const calls: { url: string; method: string; body: unknown }[] = []

const json = (body: unknown, status = 200) => new Response(body === undefined ? null : JSON.stringify(body), { status })

beforeEach(() => {
  credentials = [{ name: 'old_key', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-02T00:00:00Z' }]
  tokens = []
  calls.length = 0
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit = {}) => {
      const method = init.method ?? 'GET'
      const body = init.body ? JSON.parse(String(init.body)) : undefined
      calls.push({ url, method, body })
      if (url === '/api/credentials') return json({ credentials })
      if (url.startsWith('/api/credentials/') && method === 'PUT') {
        const name = decodeURIComponent(url.split('/').pop()!)
        credentials = [...credentials.filter((c) => c.name !== name), { name, created_at: 'now', updated_at: 'now' }]
        return json({ name, created_at: 'now', updated_at: 'now' })
      }
      if (url.startsWith('/api/credentials/') && method === 'DELETE') {
        credentials = credentials.filter((c) => c.name !== decodeURIComponent(url.split('/').pop()!))
        return new Response(null, { status: 204 })
      }
      if (url === '/api/tokens' && method === 'GET') return json({ tokens })
      if (url === '/api/tokens' && method === 'POST') {
        const token = { id: 't1', name: body.name, created_at: 'now' }
        tokens = [token]
        return json({ ...token, token: 'nl_secret' }, 201)
      }
      if (url.startsWith('/api/tokens/') && method === 'DELETE') {
        tokens = []
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

describe('Settings', () => {
  it('saves a credential without ever showing its value', async () => {
    render(<Settings />)
    await screen.findByText('old_key')
    const value = screen.getByLabelText('Credential value') as HTMLInputElement
    expect(value.type).toBe('password')
    fireEvent.change(screen.getByLabelText('Credential name'), { target: { value: 'openai_key' } })
    fireEvent.change(value, { target: { value: 'sk-123' } })
    fireEvent.click(screen.getByRole('button', { name: 'Save' }))
    await screen.findByText('openai_key')
    expect(calls.find((c) => c.method === 'PUT')).toEqual({ url: '/api/credentials/openai_key', method: 'PUT', body: { value: 'sk-123' } })
    expect(value.value).toBe('')
    expect(document.body.innerHTML).not.toContain('sk-123')
  })

  it('deletes a credential after a confirmation', async () => {
    render(<Settings />)
    await screen.findByText('old_key')
    fireEvent.click(screen.getByRole('button', { name: 'Delete old_key' }))
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false)
    fireEvent.click(screen.getByRole('button', { name: 'Yes, delete' }))
    await waitFor(() => expect(screen.queryByText('old_key')).toBeNull())
  })

  it('shows a new token once and revokes after a confirmation', async () => {
    render(<Settings />)
    fireEvent.change(screen.getByLabelText('Token name'), { target: { value: 'laptop' } })
    fireEvent.click(screen.getByRole('button', { name: 'Create token' }))
    expect((await screen.findByTestId('token-value')).textContent).toBe('nl_secret')
    expect(screen.getByText(/shown only once/)).toBeTruthy()
    fireEvent.click(screen.getByRole('button', { name: 'Done' }))
    expect(screen.queryByTestId('token-value')).toBeNull()
    const row = screen.getByTestId('token-row')
    fireEvent.click(within(row).getByRole('button', { name: 'Revoke laptop' }))
    fireEvent.click(within(row).getByRole('button', { name: 'Yes, revoke' }))
    await waitFor(() => expect(screen.queryByTestId('token-row')).toBeNull())
    expect(calls.some((c) => c.url === '/api/tokens/t1' && c.method === 'DELETE')).toBe(true)
  })
})
