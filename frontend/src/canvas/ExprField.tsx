// A text field that knows expressions: typing `{{` opens a list of what an expression can
// read here ($json, upstream nodes' fields, $vars, $credentials). Arrow keys, Enter or Tab.

import { useId, useRef, useState, type KeyboardEvent } from 'react'
import { applyCompletion, completionsAt, upstreamNodes, type CompletionResult, type ExpressionContext } from '../flow/expressions'
import { knownCredentials } from './credentials'
import { useCanvasStore } from './store'

interface Props {
  nodeId: string
  label: string
  value: string
  multiline?: boolean
  /** A bare expression (no `{{ }}` around it), e.g. Loop's `until`. */
  bare?: boolean
  placeholder?: string
  disabled?: boolean
  invalid?: boolean
  className?: string
  onChange: (value: string) => void
}

export function ExprField({ nodeId, label, value, multiline, bare, placeholder, disabled, invalid, className, onChange }: Props) {
  const store = useCanvasStore()
  const listId = useId()
  const ref = useRef<HTMLInputElement & HTMLTextAreaElement>(null)
  const [result, setResult] = useState<CompletionResult | null>(null)
  const [active, setActive] = useState(0)

  const context = (): ExpressionContext => {
    const state = store.getState()
    const variables = state.meta.variables
    return {
      upstream: [...upstreamNodes(state.catalogue, state.nodes, state.edges, nodeId), ...state.outer],
      variables: variables && typeof variables === 'object' ? Object.keys(variables) : [],
      credentials: knownCredentials(),
      inLoop: state.inLoop,
    }
  }

  const refresh = (text: string, cursor: number) => {
    const shift = bare ? 2 : 0
    const found = completionsAt(bare ? `{{${text}` : text, cursor + shift, context())
    setResult(found && { ...found, from: found.from - shift, to: found.to - shift })
    setActive(0)
  }

  const accept = (index: number) => {
    if (!result) return
    const option = result.options[index]
    const applied = bare
      ? { text: value.slice(0, result.from) + option.label + value.slice(result.to), cursor: result.from + option.label.length }
      : applyCompletion(value, result, option)
    onChange(applied.text)
    setResult(null)
    requestAnimationFrame(() => {
      ref.current?.focus()
      ref.current?.setSelectionRange(applied.cursor, applied.cursor)
    })
  }

  const onKeyDown = (event: KeyboardEvent) => {
    if (!result) return
    if (event.key === 'ArrowDown') setActive((active + 1) % result.options.length)
    else if (event.key === 'ArrowUp') setActive((active - 1 + result.options.length) % result.options.length)
    else if (event.key === 'Enter' || event.key === 'Tab') accept(active)
    else if (event.key === 'Escape') setResult(null)
    else return
    event.preventDefault()
    event.stopPropagation()
  }

  const common = {
    ref,
    className: `nodrag nowheel ${className ?? ''}`,
    'aria-label': label,
    'aria-invalid': invalid || undefined,
    role: 'combobox',
    'aria-autocomplete': 'list' as const,
    'aria-expanded': Boolean(result),
    'aria-controls': result ? listId : undefined,
    'aria-activedescendant': result ? `${listId}-${active}` : undefined,
    value,
    placeholder,
    disabled,
    spellCheck: false,
    onKeyDown,
    onBlur: () => setTimeout(() => setResult(null), 150),
    onChange: (event: { target: { value: string; selectionStart: number | null } }) => {
      onChange(event.target.value)
      refresh(event.target.value, event.target.selectionStart ?? event.target.value.length)
    },
  }

  return (
    <div className="expr-field">
      {multiline ? <textarea rows={2} {...common} /> : <input type="text" {...common} />}
      {result && (
        <ul className="completions nowheel" role="listbox" id={listId} aria-label={`Expressions for ${label}`}>
          {result.options.map((option, index) => (
            <li
              key={option.label}
              id={`${listId}-${index}`}
              role="option"
              aria-selected={index === active}
              className={index === active ? 'active' : undefined}
              onMouseDown={(event) => {
                event.preventDefault()
                accept(index)
              }}
            >
              <code>{option.label}</code>
              {option.detail && <span>{option.detail}</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
