// A value as pretty JSON; a big one starts collapsed behind a "Show" button.

import { useState } from 'react'
import './components.css'

const BIG = 600

export function pretty(value: unknown): string {
  if (value === undefined) return 'undefined'
  try {
    return JSON.stringify(value, null, 2) ?? String(value)
  } catch {
    return String(value)
  }
}

export function JsonView({
  value,
  testId,
  label,
  collapseAbove = BIG,
}: {
  value: unknown
  testId?: string
  label?: string
  collapseAbove?: number
}) {
  const text = pretty(value)
  const big = text.length > collapseAbove
  const [open, setOpen] = useState(!big)
  const lines = text.split('\n').length
  return (
    <div className="json-view" data-testid={testId} data-collapsed={open ? 'false' : 'true'}>
      {big && (
        <button type="button" className="json-toggle" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Collapse' : 'Show'} {label ?? 'value'} ({lines} lines, {text.length.toLocaleString()} chars)
        </button>
      )}
      {open ? <pre tabIndex={0}>{text}</pre> : <pre className="json-preview">{text.slice(0, 160).replace(/\s+/g, ' ')}…</pre>}
    </div>
  )
}
