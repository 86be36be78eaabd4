// Knowledge (#/knowledge): the collections, drag-and-drop upload with progress (the bytes
// sent, then the ingest run's embedding progress), and a search box showing hits with
// their sources.

import { useCallback, useEffect, useState } from 'react'
import { followRunEvents } from '../api/stream'
import { hrefOf } from '../app/route'
import {
  type Collection,
  type SearchMode,
  type SearchResult,
  dropCollection,
  isSupported,
  listCollections,
  searchCollection,
  sourceOf,
  uploadFiles,
} from './api'
import './knowledge.css'

const NAME_RE = /^[\w][\w .-]{0,127}$/

interface Upload {
  stage: 'sending' | 'ingesting' | 'done' | 'failed'
  sent: number
  embedded: number
  of: number
  runId: string | null
  message: string
}

export function KnowledgePage() {
  const [collections, setCollections] = useState<Collection[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [selected, setSelected] = useState('')

  const load = useCallback(async () => {
    try {
      const found = await listCollections()
      setCollections(found)
      setError(null)
      setSelected((current) => current || found[0]?.name || '')
    } catch (e) {
      setError((e as Error).message)
    }
  }, [])
  useEffect(() => {
    void load()
  }, [load])

  return (
    <main className="knowledge-page">
      <h1>Knowledge</h1>
      <p className="muted">
        Collections of documents that flows search (Knowledge Search, or a Knowledge Base wired into an Agent). Files
        are chunked and embedded on the server with the local model; see docs/knowledge.md.
      </p>
      {error && (
        <p className="banner error" role="alert">
          {error}
        </p>
      )}
      <Collections items={collections} selected={selected} onSelect={setSelected} onChanged={load} />
      <UploadBox collection={selected} onSelect={setSelected} onDone={load} />
      {selected && collections?.some((c) => c.name === selected) && <SearchBox collection={selected} />}
    </main>
  )
}

function Collections(props: {
  items: Collection[] | null
  selected: string
  onSelect: (name: string) => void
  onChanged: () => Promise<void>
}) {
  const [confirm, setConfirm] = useState<string | null>(null)
  const { items } = props
  if (items === null) return <p className="muted">Loading collections…</p>
  return (
    <section className="knowledge-section" aria-labelledby="collections-title">
      <h2 id="collections-title">Collections</h2>
      {items.length === 0 ? (
        <p className="muted empty-line">No collection yet: upload files below to make one.</p>
      ) : (
        <table className="knowledge-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Model</th>
              <th>Chunks</th>
              <th>Sources</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {items.map((c) => (
              <tr key={c.name} aria-selected={c.name === props.selected}>
                <td>
                  <button type="button" className="link" onClick={() => props.onSelect(c.name)}>
                    {c.name}
                  </button>
                </td>
                <td className="mono">
                  {c.model} ({c.dimension})
                </td>
                <td>{c.chunks}</td>
                <td>{c.sources}</td>
                <td className="row-actions">
                  {confirm === c.name ? (
                    <span className="confirm">
                      <span>Drop {c.name}?</span>
                      <button
                        type="button"
                        className="danger"
                        onClick={async () => {
                          setConfirm(null)
                          await dropCollection(c.name)
                          if (props.selected === c.name) props.onSelect('')
                          await props.onChanged()
                        }}
                      >
                        Drop
                      </button>
                      <button type="button" onClick={() => setConfirm(null)}>
                        Keep
                      </button>
                    </span>
                  ) : (
                    <button type="button" onClick={() => setConfirm(c.name)} aria-label={`Drop ${c.name}`}>
                      Drop
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

function UploadBox(props: { collection: string; onSelect: (name: string) => void; onDone: () => Promise<void> }) {
  const [name, setName] = useState(props.collection)
  const [over, setOver] = useState(false)
  const [upload, setUpload] = useState<Upload | null>(null)
  useEffect(() => setName(props.collection), [props.collection])
  const nameProblem = name && !NAME_RE.test(name) ? 'Letters, digits, _ - . and spaces; at most 128.' : null
  const busy = upload?.stage === 'sending' || upload?.stage === 'ingesting'

  const send = async (files: File[]) => {
    const target = name.trim()
    const refused = files.filter((f) => !isSupported(f.name))
    if (!target || nameProblem) {
      setUpload({ stage: 'failed', sent: 0, embedded: 0, of: 0, runId: null, message: 'Name the collection first.' })
      return
    }
    if (refused.length) {
      setUpload({
        stage: 'failed',
        sent: 0,
        embedded: 0,
        of: 0,
        runId: null,
        message: `Not a supported file: ${refused.map((f) => f.name).join(', ')} (txt, md, html, pdf, docx, csv, json).`,
      })
      return
    }
    const state: Upload = { stage: 'sending', sent: 0, embedded: 0, of: 0, runId: null, message: '' }
    setUpload({ ...state })
    try {
      const runId = await uploadFiles(target, files, (sent) => setUpload({ ...state, sent }))
      Object.assign(state, { stage: 'ingesting', sent: 1, runId })
      setUpload({ ...state })
      const final = await followRunEvents(runId, (event) => {
        const data = event.data
        if (event.event_type === 'progress' && typeof data.embedded === 'number') {
          Object.assign(state, { embedded: data.embedded, of: Number(data.of ?? 0) })
          setUpload({ ...state })
        }
        if (event.event_type === 'completed' && event.node_id === 'write') {
          const out = (data.outputs as Record<string, Record<string, number>> | undefined)?.output
          if (out) state.message = `${out.added} added, ${out.updated} updated, ${out.unchanged} unchanged, ${out.removed} removed.`
        }
      })
      const ok = final?.event_type === 'run_completed'
      setUpload({
        ...state,
        stage: ok ? 'done' : 'failed',
        message: ok ? `Ingested into ${target}: ${state.message}` : `The ingest run ended: ${final?.event_type ?? 'unknown'}.`,
      })
      props.onSelect(target)
      await props.onDone()
    } catch (e) {
      setUpload({ ...state, stage: 'failed', message: (e as Error).message })
    }
  }

  return (
    <section className="knowledge-section" aria-labelledby="upload-title">
      <h2 id="upload-title">Add documents</h2>
      <label className="knowledge-field">
        Collection
        <input
          value={name}
          onChange={(event) => setName(event.target.value)}
          placeholder="docs"
          aria-label="Collection name"
          aria-invalid={nameProblem ? true : undefined}
        />
      </label>
      {nameProblem && <p className="field-problem">{nameProblem}</p>}
      <div
        className={`drop-zone${over ? ' over' : ''}`}
        onDragOver={(event) => {
          event.preventDefault()
          setOver(true)
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(event) => {
          event.preventDefault()
          setOver(false)
          if (!busy) void send(Array.from(event.dataTransfer.files))
        }}
      >
        <p>Drop files here (txt, md, html, pdf, docx, csv, json), or</p>
        <label className="button-like">
          choose files
          <input
            type="file"
            multiple
            hidden
            aria-label="Files to upload"
            disabled={busy}
            onChange={(event) => {
              const files = Array.from(event.target.files ?? [])
              event.target.value = ''
              if (files.length) void send(files)
            }}
          />
        </label>
      </div>
      {upload && <UploadProgress upload={upload} />}
    </section>
  )
}

function UploadProgress({ upload }: { upload: Upload }) {
  const fraction =
    upload.stage === 'sending' ? upload.sent * 0.2 : upload.of ? 0.2 + 0.8 * (upload.embedded / upload.of) : 0.2
  return (
    <div className={`upload-progress ${upload.stage}`} role="status">
      {(upload.stage === 'sending' || upload.stage === 'ingesting') && (
        <progress max={1} value={fraction} aria-label="Upload progress" />
      )}
      <span>
        {upload.stage === 'sending' && `Sending… ${Math.round(upload.sent * 100)}%`}
        {upload.stage === 'ingesting' &&
          (upload.of ? `Embedding ${upload.embedded} of ${upload.of} chunks…` : 'Loading and chunking…')}
        {(upload.stage === 'done' || upload.stage === 'failed') && upload.message}
      </span>
      {upload.runId && (
        <a href={hrefOf({ page: 'runs', runId: upload.runId })} className="muted">
          the run
        </a>
      )}
    </div>
  )
}

function SearchBox({ collection }: { collection: string }) {
  const [query, setQuery] = useState('')
  const [mode, setMode] = useState<SearchMode>('hybrid')
  const [result, setResult] = useState<SearchResult | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [searching, setSearching] = useState(false)

  const run = async () => {
    setSearching(true)
    try {
      setResult(await searchCollection(collection, query.trim(), mode))
      setError(null)
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setSearching(false)
    }
  }

  return (
    <section className="knowledge-section" aria-labelledby="search-title">
      <h2 id="search-title">Search {collection}</h2>
      <form
        className="knowledge-search"
        onSubmit={(event) => {
          event.preventDefault()
          if (query.trim()) void run()
        }}
      >
        <input
          value={query}
          onChange={(event) => setQuery(event.target.value)}
          placeholder="Ask a question…"
          aria-label="Search query"
        />
        <select value={mode} onChange={(event) => setMode(event.target.value as SearchMode)} aria-label="Search mode">
          <option value="hybrid">hybrid</option>
          <option value="vector">vector</option>
          <option value="keyword">keyword</option>
        </select>
        <button type="submit" disabled={!query.trim() || searching}>
          Search
        </button>
      </form>
      {error && (
        <p className="banner error" role="alert">
          {error}
        </p>
      )}
      {result && result.hits.length === 0 && <p className="muted empty-line">No hits.</p>}
      {result && result.hits.length > 0 && (
        <ol className="hits" aria-label="Hits">
          {result.hits.map((hit, index) => (
            <li key={hit.id}>
              <div className="hit-head">
                <span className="hit-n">[{index + 1}]</span>
                <span className="hit-source">{sourceOf(hit)}</span>
                <span className="hit-score mono">{hit.score.toFixed(4)}</span>
              </div>
              <p className="hit-text">{hit.text}</p>
            </li>
          ))}
        </ol>
      )}
    </section>
  )
}
