// Asks for an API token when the server answers 401 (a server not started with --dev).

import { useState } from 'react'
import { setToken } from '../api/client'

export function TokenDialog({ onDone }: { onDone: () => void }) {
  const [value, setValue] = useState('')
  return (
    <div className="modal-backdrop">
      <form
        className="modal"
        role="dialog"
        aria-labelledby="token-title"
        onSubmit={(event) => {
          event.preventDefault()
          setToken(value.trim())
          onDone()
        }}
      >
        <h2 id="token-title">API token</h2>
        <p>
          This server needs a token. Create one with <code>nodeloom token create NAME</code> and
          paste it here; it is kept in this browser only.
        </p>
        <input
          autoFocus
          type="password"
          aria-label="API token"
          value={value}
          onChange={(event) => setValue(event.target.value)}
          placeholder="nl_..."
        />
        <div className="modal-actions">
          <button type="submit" className="primary" disabled={!value.trim()}>
            Use token
          </button>
        </div>
      </form>
    </div>
  )
}
