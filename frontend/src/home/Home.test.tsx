import { cleanup, render, screen, within } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Home } from './Home'

const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200 })

const flows = [
  { id: 'f2', name: 'Triage', latest_version: 1, created_at: '', updated_at: '' },
  { id: 'f1', name: 'Hello', latest_version: 3, created_at: '', updated_at: '' },
]

beforeEach(() => {
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) => {
      if (url === '/api/flows') return json({ flows })
      const id = url.split('/').pop()
      const flow = flows.find((f) => f.id === id)!
      const description = id === 'f1' ? 'The smallest flow.' : undefined
      return json({
        flow_id: flow.id,
        name: flow.name,
        version: flow.latest_version,
        document: { nodes: [{ id: 'a' }, { id: 'b' }], edges: [], description },
      })
    }),
  )
})

afterEach(() => {
  cleanup()
  vi.unstubAllGlobals()
})

describe('the first page', () => {
  it('lists the saved flows by name with their descriptions, Run and Open', async () => {
    render(<Home />)
    const list = await screen.findByRole('list', { name: 'Saved flows' })
    const cards = await within(list).findAllByRole('listitem')
    expect(cards.map((card) => within(card).getByRole('heading').textContent)).toEqual(['Hello', 'Triage'])
    expect(within(cards[0]).getByText('The smallest flow.')).toBeTruthy()
    expect(within(cards[1]).getByText('No description.')).toBeTruthy()
    expect(within(cards[0]).getByText('2 nodes · v3')).toBeTruthy()
    expect(within(cards[0]).getByRole('link', { name: 'Run Hello' }).getAttribute('href')).toBe('#/flows/f1/chat')
    expect(within(cards[0]).getByRole('link', { name: 'Open' }).getAttribute('href')).toBe('#/flows/f1')
  })

  it('says what to do when nothing is saved', async () => {
    flows.length = 0
    render(<Home />)
    expect(await screen.findByText(/No saved flows yet/)).toBeTruthy()
  })
})
