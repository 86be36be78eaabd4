// The control of a secret-capable text parameter (database-query's `connection`,
// send-email's `account`, a model's `api_key`, a webhook's `secret`): a list of the stored
// credentials that writes `{{ $credentials.NAME }}`, a link to add one in Settings, and
// "other value…" for anything else (a plain sqlite:/// URL, an expression), typed as before.

import { useState } from 'react'
import { hrefOf } from '../app/route'
import { credentialOf, credentialReference, refreshCredentials, useCredentialNames } from './credentials'
import { ExprField } from './ExprField'

const OTHER = '\u0000other'

interface Props {
  nodeId: string
  label: string
  value: string
  placeholder?: string
  disabled?: boolean
  invalid?: boolean
  onChange: (value: string) => void
}

export function CredentialField({ nodeId, label, value, placeholder, disabled, invalid, onChange }: Props) {
  const names = useCredentialNames()
  const chosen = credentialOf(value)
  const [typing, setTyping] = useState(false)
  const other = typing || (value !== '' && chosen === null)
  const missing = chosen !== null && names !== null && !names.includes(chosen)
  const selected = other ? OTHER : (chosen ?? '')
  return (
    <div className="credential-field">
      <div className="credential-row">
        <select
          className="nodrag"
          aria-label={`${label} credential`}
          value={selected}
          disabled={disabled}
          onFocus={() => void refreshCredentials()}
          onChange={(event) => {
            const next = event.target.value
            if (next === OTHER) {
              setTyping(true)
              return
            }
            setTyping(false)
            onChange(next ? credentialReference(next) : '')
          }}
        >
          <option value="">{names === null ? 'loading credentials…' : '— choose a credential —'}</option>
          {(names ?? []).map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
          {missing && chosen !== null && (
            <option value={chosen}>
              {chosen} (not stored)
            </option>
          )}
          <option value={OTHER}>other value…</option>
        </select>
        <a className="nodrag small credential-new" href={hrefOf({ page: 'settings' })} target="_blank" rel="noreferrer">
          New credential
        </a>
      </div>
      {missing && (
        <p className="field-error" role="status">
          No credential named {chosen} is stored; add it in Settings.
        </p>
      )}
      {other && (
        <ExprField nodeId={nodeId} label={label} value={value} placeholder={placeholder} disabled={disabled} invalid={invalid} onChange={onChange} />
      )}
    </div>
  )
}
