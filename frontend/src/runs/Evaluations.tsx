// The evaluations `nodeloom eval` stored (GET /api/evaluations), under the run list: each
// with its flow version and mean scores; opening one shows its rows, answers and scores.

import { useEffect, useState } from 'react'
import { api } from '../api/client'
import type { Evaluation, EvaluationSummary } from '../api/models'
import { formatTime } from '../components/time'

const text = (value: unknown): string => {
  if (typeof value === 'string') return value
  if (value && typeof value === 'object') {
    for (const key of ['text', 'response', 'reply', 'answer', 'message', 'content']) {
      const field = (value as Record<string, unknown>)[key]
      if (typeof field === 'string') return field
    }
  }
  return value === undefined || value === null ? '' : JSON.stringify(value)
}

const means = (summary: Record<string, number>) =>
  Object.entries(summary)
    .map(([name, mean]) => `${name} ${mean.toFixed(2)}`)
    .join(', ')

export function Evaluations() {
  const [list, setList] = useState<EvaluationSummary[] | null>(null)
  const [open, setOpen] = useState<Evaluation | null>(null)
  const [error, setError] = useState<string | null>(null)

  useEffect(() => {
    api<{ evaluations: EvaluationSummary[] }>('/api/evaluations').then(
      (answer) => setList(answer.evaluations),
      (exc: Error) => setError(exc.message),
    )
  }, [])

  const show = async (id: string) => {
    if (open?.id === id) return setOpen(null)
    try {
      setOpen(await api<Evaluation>(`/api/evaluations/${encodeURIComponent(id)}`))
    } catch (exc) {
      setError((exc as Error).message)
    }
  }

  return (
    <section className="evaluations" aria-label="Evaluations">
      <h2>Evaluations</h2>
      {error && (
        <p className="banner error" role="alert">
          {error}
        </p>
      )}
      {list?.length === 0 && (
        <p className="muted">
          No evaluations yet: <code>nodeloom eval FLOW DATASET</code> scores a flow over a dataset (docs/testing.md).
        </p>
      )}
      {list && list.length > 0 && (
        <div className="table-wrap">
          <table className="run-table">
            <thead>
              <tr>
                <th scope="col">Evaluated</th>
                <th scope="col">Flow</th>
                <th scope="col">Version</th>
                <th scope="col">Rows</th>
                <th scope="col">Mean scores</th>
              </tr>
            </thead>
            <tbody>
              {list.map((item) => (
                <tr key={item.id} data-testid="evaluation-row" onClick={() => void show(item.id)}>
                  <td title={item.created_at}>{formatTime(item.created_at)}</td>
                  <td>
                    <button type="button" className="link" aria-expanded={open?.id === item.id}>
                      {item.flow.name ?? item.flow.path ?? item.id}
                    </button>
                  </td>
                  <td className="mono">{item.flow.version}</td>
                  <td className="num">{item.dataset.rows}</td>
                  <td>{means(item.summary)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open && (
        <div className="table-wrap">
          <table className="run-table" aria-label={`Rows of evaluation ${open.id}`}>
            <thead>
              <tr>
                <th scope="col">Row</th>
                <th scope="col">Input</th>
                <th scope="col">Expected</th>
                <th scope="col">Answer</th>
                {Object.keys(open.summary).map((name) => (
                  <th scope="col" key={name}>
                    {name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {open.rows.map((row) => (
                <tr key={row.id}>
                  <td className="mono">{row.id}</td>
                  <td>{text(row.input)}</td>
                  <td>{text(row.expected)}</td>
                  <td title={row.error ?? undefined}>{row.status === 'completed' ? text(row.answer) : row.status}</td>
                  {Object.keys(open.summary).map((name) => (
                    <td key={name} className="num" title={row.scores[name]?.reason || undefined}>
                      {row.scores[name]?.score.toFixed(2)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}
