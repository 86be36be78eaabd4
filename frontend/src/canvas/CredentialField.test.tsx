import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Parameter } from '../api/models'
import { catalogue } from '../flow/testCatalogue'
import { resetCredentials } from './credentials'
import { ParamField } from './ParamField'
import { CanvasStoreContext, createCanvasStore } from './store'

const CONNECTION: Parameter = {
  id: 'connection',
  type: 'string',
  label: 'Connection',
  default: null,
  required: true,
  hybrid: false,
  secret: true,
  placeholder: '{{ $credentials.orders_db }}',
}
const asked: string[] = []

function field(value: unknown, onChange = vi.fn()) {
  const store = createCanvasStore(catalogue, { nodes: [{ id: 'db', type: 'chat-start', data: {} }], edges: [] })
  const view = render(
    <CanvasStoreContext.Provider value={store}>
      <ParamField nodeId="db" parameter={CONNECTION} value={value} onChange={onChange} />
    </CanvasStoreContext.Provider>,
  )
  return { onChange, view }
}

describe('the credential picker of a secret-capable text parameter', () => {
  beforeEach(() => {
    asked.length = 0
    resetCredentials()
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string) => {
        asked.push(url)
        const credentials = [
          { name: 'orders_db', created_at: 't', updated_at: 't' },
          { name: 'smtp', created_at: 't', updated_at: 't' },
        ]
        return new Response(JSON.stringify({ credentials }), { status: 200 })
      }),
    )
  })
  afterEach(() => {
    cleanup()
    vi.unstubAllGlobals()
  })

  it('lists the stored credentials by name and writes the reference to the one chosen', async () => {
    const { onChange } = field(undefined)
    const select = screen.getByLabelText('Connection credential') as HTMLSelectElement
    await waitFor(() => expect(select.options.length).toBe(4))
    expect([...select.options].map((o) => o.text)).toEqual(['— choose a credential —', 'orders_db', 'smtp', 'other value…'])
    expect(asked).toEqual(['/api/credentials'])
    fireEvent.change(select, { target: { value: 'orders_db' } })
    expect(onChange).toHaveBeenCalledWith('connection', '{{ $credentials.orders_db }}')
    expect(screen.queryByLabelText('Connection')).toBeNull() // no free text while a credential is chosen
  })

  it('shows the credential a saved value names, and links to Settings to add a new one', async () => {
    field('{{ $credentials.smtp }}')
    const select = screen.getByLabelText('Connection credential') as HTMLSelectElement
    await waitFor(() => expect(select.value).toBe('smtp'))
    const link = screen.getByRole('link', { name: 'New credential' })
    expect(link.getAttribute('href')).toBe('#/settings')
  })

  it('keeps any other value (a plain sqlite URL) in a text field', async () => {
    const { onChange } = field('sqlite:///orders.db')
    const select = screen.getByLabelText('Connection credential') as HTMLSelectElement
    await waitFor(() => expect(select.options.length).toBe(4))
    expect(select.value).toBe('\u0000other')
    const input = screen.getByLabelText('Connection') as HTMLInputElement
    expect(input.value).toBe('sqlite:///orders.db')
    fireEvent.change(input, { target: { value: 'sqlite:///other.db' } })
    expect(onChange).toHaveBeenCalledWith('connection', 'sqlite:///other.db')
  })

  it('says so when the value names a credential that is not stored', async () => {
    field('{{ $credentials.gone }}')
    await act(async () => {})
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('No credential named gone'))
  })
})
