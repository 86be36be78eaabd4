// The inline control of one parameter, chosen by its type. Every control is `nodrag` and
// labelled; a wired hybrid parameter is dimmed and says so.

import { memo, useContext, useEffect, useState } from 'react'
import type { Issue, Parameter } from '../api/models'
import { asInnerDocument } from '../flow/document'
import { CodeField } from './CodeField'
import { CredentialField } from './CredentialField'
import { ExprField } from './ExprField'
import { BodyEditorContext } from './store'

interface Props {
  nodeId: string
  parameter: Parameter
  value: unknown
  wired?: boolean
  issues?: Issue[]
  onChange: (key: string, value: unknown) => void
}

function text(value: unknown): string {
  if (value === undefined || value === null) return ''
  return typeof value === 'string' ? value : JSON.stringify(value)
}

function JsonField({ nodeId, label, value, disabled, onChange }: { nodeId: string; label: string; value: unknown; disabled?: boolean; onChange: (v: unknown) => void }) {
  const shown = value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value, null, 2)
  const [draft, setDraft] = useState(shown)
  const [error, setError] = useState<string | null>(null)
  useEffect(() => {
    // Follow outside changes (undo, paste) unless the draft already means the same value.
    setDraft((current) => {
      try {
        if (JSON.stringify(JSON.parse(current)) === JSON.stringify(value)) return current
      } catch {
        if (current === value) return current
      }
      setError(null)
      return shown
    })
  }, [value, shown])
  return (
    <>
      <ExprField
        nodeId={nodeId}
        label={label}
        multiline
        className="code"
        value={draft}
        disabled={disabled}
        invalid={Boolean(error)}
        placeholder="JSON"
        onChange={(next) => {
          setDraft(next)
          if (!next.trim()) {
            setError(null)
            onChange(undefined)
            return
          }
          try {
            onChange(JSON.parse(next))
            setError(null)
          } catch (exc) {
            if (next.trim().startsWith('{{')) {
              onChange(next) // an expression that gives the value
              setError(null)
            } else setError((exc as Error).message)
          }
        }}
      />
      {error && (
        <p className="field-error" role="status">
          JSON: {error}
        </p>
      )}
    </>
  )
}

function NumberField({ parameter, value, label, disabled, onChange }: { parameter: Parameter; value: unknown; label: string; disabled?: boolean; onChange: (v: unknown) => void }) {
  const integer = parameter.type === 'integer'
  const slider = parameter.minimum !== undefined && parameter.maximum !== undefined
  const number = typeof value === 'number' ? value : undefined
  const fallback = typeof parameter.default === 'number' ? parameter.default : undefined
  const parse = (raw: string) => {
    if (raw === '') return undefined
    const n = integer ? Number.parseInt(raw, 10) : Number(raw)
    return Number.isNaN(n) ? undefined : n
  }
  return (
    <div className="number-field">
      {slider && (
        <input
          type="range"
          className="nodrag"
          aria-label={`${label} slider`}
          min={parameter.minimum}
          max={parameter.maximum}
          step={integer ? 1 : ((parameter.maximum ?? 1) - (parameter.minimum ?? 0)) / 100}
          value={number ?? fallback ?? parameter.minimum}
          disabled={disabled}
          onChange={(event) => onChange(parse(event.target.value))}
        />
      )}
      <input
        type="number"
        className="nodrag"
        aria-label={label}
        min={parameter.minimum}
        max={parameter.maximum}
        step={integer ? 1 : 'any'}
        value={number ?? ''}
        placeholder={fallback !== undefined ? String(fallback) : undefined}
        disabled={disabled}
        onChange={(event) => onChange(parse(event.target.value))}
      />
    </div>
  )
}

function BodyField({ nodeId, value }: { nodeId: string; value: unknown }) {
  const openBody = useContext(BodyEditorContext)
  const count = asInnerDocument(value).nodes.length
  return (
    <div className="body-field">
      <span>
        {count} node{count === 1 ? '' : 's'}
      </span>
      <button type="button" className="nodrag small" onClick={() => openBody?.(nodeId)} disabled={!openBody}>
        Edit body
      </button>
    </div>
  )
}

function Control({ nodeId, parameter, value, wired, invalid, onChange }: Props & { invalid: boolean }) {
  const label = parameter.label || parameter.id
  const set = (v: unknown) => onChange(parameter.id, v)
  const placeholder = parameter.placeholder ?? (parameter.default !== null && parameter.default !== undefined ? text(parameter.default) : undefined)
  const common = { nodeId, label, disabled: wired, invalid }
  const asExpression = typeof value === 'string' && value.includes('{{')
  switch (parameter.type) {
    case 'string':
      if (parameter.secret) {
        return <CredentialField {...common} value={text(value)} placeholder={placeholder} onChange={(v) => set(v || undefined)} />
      }
      return <ExprField {...common} value={text(value)} placeholder={placeholder} onChange={(v) => set(v || undefined)} />
    case 'text':
      return <ExprField {...common} multiline value={text(value)} placeholder={placeholder} onChange={(v) => set(v || undefined)} />
    case 'expression':
      return <ExprField {...common} bare className="code" value={text(value)} placeholder={placeholder ?? 'expression'} onChange={(v) => set(v || undefined)} />
    case 'number':
    case 'integer':
      if (asExpression) return <ExprField {...common} value={text(value)} onChange={(v) => set(v || undefined)} />
      return <NumberField parameter={parameter} value={value} label={label} disabled={wired} onChange={set} />
    case 'boolean':
      return (
        <input
          type="checkbox"
          className="nodrag"
          aria-label={label}
          checked={typeof value === 'boolean' ? value : parameter.default === true}
          disabled={wired}
          onChange={(event) => set(event.target.checked)}
        />
      )
    case 'enum':
      return (
        <select className="nodrag" aria-label={label} value={typeof value === 'string' ? value : ''} disabled={wired} onChange={(event) => set(event.target.value || undefined)}>
          <option value="">{parameter.default !== null && parameter.default !== undefined ? `default (${text(parameter.default)})` : '—'}</option>
          {(parameter.options ?? []).map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
      )
    case 'json':
      return <JsonField nodeId={nodeId} label={label} value={value} disabled={wired} onChange={set} />
    case 'code':
      return <CodeField label={label} value={text(value)} language={parameter.language} disabled={wired} onChange={(v) => set(v || undefined)} />
    case 'graph':
      return <BodyField nodeId={nodeId} value={value} />
    default:
      return <ExprField {...common} value={text(value)} onChange={(v) => set(v || undefined)} />
  }
}

export const ParamField = memo(function ParamField(props: Props) {
  const { parameter, wired, issues } = props
  const label = parameter.label || parameter.id
  const inline = parameter.type === 'boolean'
  return (
    <div className={`param${inline ? ' inline' : ''}${wired ? ' wired' : ''}${issues?.length ? ' has-issue' : ''}`} title={parameter.description}>
      <span className="param-label">
        {label}
        {parameter.required && <span className="required" aria-hidden="true"> *</span>}
        {wired && <span className="wired-tag">wired</span>}
      </span>
      <Control {...props} invalid={Boolean(issues?.length)} />
      {issues?.length ? (
        <p className="field-error" data-testid="field-issue">
          {issues[0].message}
        </p>
      ) : null}
    </div>
  )
})
