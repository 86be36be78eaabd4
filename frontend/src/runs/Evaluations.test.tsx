import { cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Evaluations } from './Evaluations'

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status })

const summary = {
  id: 'e2',
  created_at: '2026-11-25T12:00:00Z',
  duration_s: 1.5,
  flow: { name: 'Support router', path: 'examples/support-router.json', version: 'sha-abc' },
  dataset: { path: 'rows.jsonl', sha256: 'x', rows: 2 },
  scorers: [{ name: 'contains' }],
  summary: { contains: 0.5 },
}

let evaluations = [summary]

beforeEach(() => {
  evaluations = [summary]
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) => {
      if (url === '/api/evaluations') return json({ evaluations })
      return json({
        ...summary,
        rows: [
          { id: '1', input: 'refund?', expected: '[billing]', answer: { text: '[billing] ok' }, status: 'completed', run_id: 'r', error: null, duration_ms: 3, scores: { contains: { score: 1, reason: '' } } },
          { id: '2', input: 'hours?', expected: '[other]', answer: null, status: 'failed', run_id: 'r2', error: 'boom', duration_ms: 3, scores: { contains: { score: 0, reason: 'the run failed: boom' } } },
        ],
      })
    }),
  )
})

afterEach(() => {
  cleanup()
  vi.unstubAllGlobals()
})

describe('evaluations on the run history page', () => {
  it('lists each evaluation with its flow version and mean scores, and opens its rows', async () => {
    render(<Evaluations />)
    const row = await screen.findByTestId('evaluation-row')
    expect(within(row).getByText('sha-abc')).toBeTruthy()
    expect(within(row).getByText('contains 0.50')).toBeTruthy()
    fireEvent.click(within(row).getByRole('button', { name: 'Support router' }))
    const rows = await screen.findByRole('table', { name: 'Rows of evaluation e2' })
    expect(within(rows).getByText('[billing] ok')).toBeTruthy()
    expect(within(rows).getByText('failed')).toBeTruthy()
    expect(within(rows).getByTitle('the run failed: boom').textContent).toBe('0.00')
  })

  it('says how to make one when there is none', async () => {
    evaluations = []
    render(<Evaluations />)
    expect(await screen.findByText(/No evaluations yet/)).toBeTruthy()
  })
})
