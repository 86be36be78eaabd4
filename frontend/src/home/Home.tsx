// The first page: the saved flows (the examples, on a fresh install) with their
// descriptions, each with Run (open it, ready to chat) and Open, and New flow.

import { useEffect, useState } from 'react'
import { api } from '../api/client'
import type { FlowSummary, FlowVersion } from '../api/models'
import { hrefOf } from '../app/route'
import './home.css'

interface Card {
  id: string
  name: string
  description: string
  nodes: number
  version: number
}

export async function loadCards(): Promise<Card[]> {
  const { flows } = await api<{ flows: FlowSummary[] }>('/api/flows')
  const versions = await Promise.all(
    flows.map((flow) => api<FlowVersion>(`/api/flows/${encodeURIComponent(flow.id)}`)),
  )
  return versions
    .map((flow) => ({
      id: flow.flow_id,
      name: flow.name,
      description: typeof flow.document.description === 'string' ? flow.document.description : '',
      nodes: flow.document.nodes.length,
      version: flow.version,
    }))
    .sort((a, b) => a.name.localeCompare(b.name))
}

export function Home() {
  const [cards, setCards] = useState<Card[] | null>(null)
  const [error, setError] = useState<string | null>(null)

  useEffect(() => {
    loadCards().then(setCards, (exc: Error) => setError(exc.message))
  }, [])

  return (
    <main className="home">
      <header className="home-header">
        <div>
          <h1>Flows</h1>
          <p className="muted">
            Pick a flow and press <strong>Run</strong>: it opens with the chat ready; type a message and
            press Enter. Press <kbd>?</kbd> for keyboard shortcuts and the docs.
          </p>
        </div>
        <a className="button primary" href={hrefOf({ page: 'editor', flowId: null })}>
          New flow
        </a>
      </header>
      {error && (
        <p className="banner error" role="alert">
          Could not list the flows: {error}
        </p>
      )}
      {cards === null && !error && <p className="muted">Loading…</p>}
      {cards?.length === 0 && (
        <p className="home-empty">
          No saved flows yet. Start a <a href={hrefOf({ page: 'editor', flowId: null })}>new flow</a>, or
          serve some with <code>nodeloom serve --flows examples</code>.
        </p>
      )}
      <ul className="home-flows" aria-label="Saved flows">
        {cards?.map((card) => (
          <li key={card.id} className="home-card">
            <h2>{card.name}</h2>
            <p>{card.description || <span className="muted">No description.</span>}</p>
            <div className="home-card-footer">
              <span className="muted">
                {card.nodes} nodes · v{card.version}
              </span>
              <span className="home-card-buttons">
                <a className="button" href={hrefOf({ page: 'editor', flowId: card.id })}>
                  Open
                </a>
                <a
                  className="button primary"
                  href={hrefOf({ page: 'editor', flowId: card.id, chat: true })}
                  aria-label={`Run ${card.name}`}
                >
                  Run
                </a>
              </span>
            </div>
          </li>
        ))}
      </ul>
    </main>
  )
}
