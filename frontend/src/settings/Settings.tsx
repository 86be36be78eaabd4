// Settings (#/settings): credentials (write-only values) and API tokens (shown once).

import { useCallback, useEffect, useRef, useState } from 'react'
import { api } from '../api/client'
import { formatTime } from '../components/time'
import './settings.css'

interface Credential {
  name: string
  created_at: string
  updated_at: string
}

interface TokenInfo {
  id: string
  name: string
  created_at: string
}

const NAME_RE = /^[A-Za-z][A-Za-z0-9_]{0,63}$/

export function Settings() {
  return (
    <main className="settings-page">
      <h1>Settings</h1>
      <p className="muted settings-intro">
        A server started with <code>nodeloom serve --dev</code> needs no token: authentication is off (and it only
        listens on this machine). Otherwise every client needs an API token, made below or with{' '}
        <code>nodeloom token create NAME</code>.
      </p>
      <Credentials />
      <Tokens />
    </main>
  )
}

function useConfirm() {
  const [pending, setPending] = useState<string | null>(null)
  return { pending, ask: setPending, clear: () => setPending(null) }
}

function Credentials() {
  const [items, setItems] = useState<Credential[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [name, setName] = useState('')
  const [value, setValue] = useState('')
  const [saving, setSaving] = useState(false)
  const confirm = useConfirm()
  const valueRef = useRef<HTMLInputElement>(null)

  const load = useCallback(async () => {
    try {
      const answer = await api<{ credentials: Credential[] }>('/api/credentials')
      setItems(answer.credentials)
      setError(null)
    } catch (e) {
      setError((e as Error).message)
    }
  }, [])
  useEffect(() => {
    void load()
  }, [load])

  const exists = items?.some((item) => item.name === name.trim()) ?? false
  const nameProblem =
    name.trim() && !NAME_RE.test(name.trim()) ? 'Letters, digits and _, starting with a letter; at most 64.' : null

  const save = async () => {
    const key = name.trim()
    setSaving(true)
    setNotice(null)
    try {
      await api(`/api/credentials/${encodeURIComponent(key)}`, { method: 'PUT', json: { value } })
      setValue('')
      setName('')
      setNotice(`${exists ? 'Replaced' : 'Saved'} ${key}. Use it as {{ $credentials.${key} }}.`)
      setError(null)
      await load()
    } catch (e) {
      setError((e as Error).message)
      setValue('')
    } finally {
      setSaving(false)
    }
  }

  const remove = async (key: string) => {
    confirm.clear()
    try {
      await api(`/api/credentials/${encodeURIComponent(key)}`, { method: 'DELETE' })
      setNotice(`Deleted ${key}.`)
      await load()
    } catch (e) {
      setError((e as Error).message)
    }
  }

  return (
    <section className="settings-section" aria-labelledby="credentials-title">
      <h2 id="credentials-title">Credentials</h2>
      <p className="muted">
        API keys a flow uses, by name: <code>{'{{ $credentials.NAME }}'}</code>. Values are encrypted at rest and
        write-only — they are never shown again, here or anywhere.
      </p>
      {error && (
        <p className="banner error" role="alert">
          {error}
        </p>
      )}
      {notice && (
        <p className="settings-notice" role="status">
          {notice}
        </p>
      )}
      <form
        className="settings-form"
        onSubmit={(event) => {
          event.preventDefault()
          if (name.trim() && value && !nameProblem) void save()
        }}
      >
        <label>
          <span>Name</span>
          <input
            aria-label="Credential name"
            value={name}
            onChange={(event) => setName(event.target.value)}
            placeholder="openai_key"
            autoComplete="off"
            spellCheck={false}
            aria-invalid={nameProblem ? true : undefined}
            aria-describedby={nameProblem ? 'credential-name-problem' : undefined}
          />
        </label>
        <label>
          <span>Value</span>
          <input
            aria-label="Credential value"
            ref={valueRef}
            type="password"
            value={value}
            onChange={(event) => setValue(event.target.value)}
            autoComplete="new-password"
            placeholder="hidden once saved"
          />
        </label>
        <button type="submit" className="primary" disabled={saving || !name.trim() || !value || !!nameProblem}>
          {exists ? 'Replace' : 'Save'}
        </button>
        {nameProblem && (
          <p id="credential-name-problem" className="field-problem">
            {nameProblem}
          </p>
        )}
      </form>
      <table className="settings-table" aria-label="Credentials">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Created</th>
            <th scope="col">Updated</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {items?.map((item) => (
            <tr key={item.name} data-testid="credential-row">
              <td className="mono">{item.name}</td>
              <td title={item.created_at}>{formatTime(item.created_at)}</td>
              <td title={item.updated_at}>{formatTime(item.updated_at)}</td>
              <td className="row-actions">
                <button type="button" onClick={() => {
                    setName(item.name)
                    valueRef.current?.focus()
                  }}
                  aria-label={`Replace ${item.name}`}>
                  Replace
                </button>
                {confirm.pending === item.name ? (
                  <span className="confirm" role="group" aria-label={`Confirm deleting ${item.name}`}>
                    <span>Delete {item.name}?</span>
                    <button type="button" className="danger" autoFocus onClick={() => void remove(item.name)}>
                      Yes, delete
                    </button>
                    <button type="button" onClick={confirm.clear}>
                      Keep
                    </button>
                  </span>
                ) : (
                  <button type="button" className="danger" onClick={() => confirm.ask(item.name)} aria-label={`Delete ${item.name}`}>
                    Delete
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {items && items.length === 0 && <p className="muted empty-line">No credentials yet.</p>}
    </section>
  )
}

function Tokens() {
  const [items, setItems] = useState<TokenInfo[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [name, setName] = useState('')
  const [created, setCreated] = useState<(TokenInfo & { token: string }) | null>(null)
  const [copied, setCopied] = useState(false)
  const [busy, setBusy] = useState(false)
  const confirm = useConfirm()

  const load = useCallback(async () => {
    try {
      const answer = await api<{ tokens: TokenInfo[] }>('/api/tokens')
      setItems(answer.tokens)
      setError(null)
    } catch (e) {
      setError((e as Error).message)
    }
  }, [])
  useEffect(() => {
    void load()
  }, [load])

  const create = async () => {
    setBusy(true)
    setCopied(false)
    try {
      const token = await api<TokenInfo & { token: string }>('/api/tokens', { method: 'POST', json: { name: name.trim() } })
      setCreated(token)
      setName('')
      setError(null)
      await load()
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  const revoke = async (id: string) => {
    confirm.clear()
    try {
      await api(`/api/tokens/${encodeURIComponent(id)}`, { method: 'DELETE' })
      if (created?.id === id) setCreated(null)
      await load()
    } catch (e) {
      setError((e as Error).message)
    }
  }

  const copy = async () => {
    if (!created) return
    try {
      await navigator.clipboard.writeText(created.token)
      setCopied(true)
    } catch {
      setError('Could not copy: select the token and copy it by hand.')
    }
  }

  return (
    <section className="settings-section" aria-labelledby="tokens-title">
      <h2 id="tokens-title">API tokens</h2>
      <p className="muted">
        A token lets a client (this UI, curl, an OpenAI client) call the API: send it as{' '}
        <code>Authorization: Bearer …</code>. The server keeps only its digest.
      </p>
      {error && (
        <p className="banner error" role="alert">
          {error}
        </p>
      )}
      {created && (
        <div className="token-once" data-testid="new-token" role="status">
          <p className="token-warning">
            <strong>Copy this token now</strong> — it is shown only once and cannot be recovered.
          </p>
          <div className="token-value">
            <code data-testid="token-value">{created.token}</code>
            <button type="button" className="primary" onClick={() => void copy()}>
              {copied ? 'Copied' : 'Copy'}
            </button>
            <button type="button" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </div>
      )}
      <form
        className="settings-form"
        onSubmit={(event) => {
          event.preventDefault()
          if (name.trim()) void create()
        }}
      >
        <label>
          <span>Name</span>
          <input
            aria-label="Token name"
            value={name}
            onChange={(event) => setName(event.target.value)}
            placeholder="laptop"
            autoComplete="off"
          />
        </label>
        <button type="submit" className="primary" disabled={busy || !name.trim()}>
          Create token
        </button>
      </form>
      <table className="settings-table" aria-label="API tokens">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Id</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {items?.map((item) => (
            <tr key={item.id} data-testid="token-row">
              <td>{item.name}</td>
              <td className="mono muted">{item.id}</td>
              <td title={item.created_at}>{formatTime(item.created_at)}</td>
              <td className="row-actions">
                {confirm.pending === item.id ? (
                  <span className="confirm" role="group" aria-label={`Confirm revoking ${item.name}`}>
                    <span>Revoke {item.name}? Clients using it stop working.</span>
                    <button type="button" className="danger" autoFocus onClick={() => void revoke(item.id)}>
                      Yes, revoke
                    </button>
                    <button type="button" onClick={confirm.clear}>
                      Keep
                    </button>
                  </span>
                ) : (
                  <button type="button" className="danger" onClick={() => confirm.ask(item.id)} aria-label={`Revoke ${item.name}`}>
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {items && items.length === 0 && <p className="muted empty-line">No tokens yet.</p>}
    </section>
  )
}
