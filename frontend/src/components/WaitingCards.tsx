// The cards a paused run shows for each waiting node: an Approval's approve/reject and a
// Human Input's answer form. The chat panel and the run page both render them.

import { useState } from 'react'
import './components.css'
import { JsonView } from './JsonView'
import { approvalAnswer, inputAnswer, type Waiting } from './waiting'

export type AnswerFn = (nodeId: string, value: unknown) => Promise<void>

function useSubmit(onAnswer: AnswerFn, nodeId: string) {
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const submit = async (value: unknown) => {
    setPending(true)
    setError(null)
    try {
      await onAnswer(nodeId, value)
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setPending(false)
    }
  }
  return { pending, error, submit }
}

export function ApprovalCard({ waiting, onAnswer, disabled }: { waiting: Waiting; onAnswer: AnswerFn; disabled: boolean }) {
  const [note, setNote] = useState('')
  const { pending, error, submit } = useSubmit(onAnswer, waiting.nodeId)
  return (
    <div className="wait-card" data-testid="approval" data-node-id={waiting.nodeId}>
      <div className="wait-head">
        <span className="step-dot status-waiting" aria-hidden="true" />
        <strong>{waiting.nodeName}</strong>
        <span className="muted">needs approval</span>
      </div>
      <p className="wait-prompt">{waiting.prompt || 'Approve?'}</p>
      {waiting.value !== undefined && waiting.value !== null && (
        <details className="wait-value">
          <summary>What is being approved</summary>
          <JsonView value={waiting.value} />
        </details>
      )}
      <input
        aria-label="Note"
        placeholder="Note (optional)"
        value={note}
        onChange={(event) => setNote(event.target.value)}
        disabled={pending}
      />
      {error && (
        <p className="wait-error" role="alert">
          {error}
        </p>
      )}
      <div className="wait-actions">
        <button
          type="button"
          className="danger"
          disabled={pending || disabled}
          onClick={() => void submit(approvalAnswer('reject', note))}
        >
          Reject
        </button>
        <button
          type="button"
          className="primary"
          disabled={pending || disabled}
          onClick={() => void submit(approvalAnswer('approve', note))}
        >
          Approve
        </button>
      </div>
    </div>
  )
}

export function InputCard({ waiting, onAnswer, disabled }: { waiting: Waiting; onAnswer: AnswerFn; disabled: boolean }) {
  const [text, setText] = useState('')
  const [fields, setFields] = useState<Record<string, string | boolean>>({})
  const { pending, error, submit } = useSubmit(onAnswer, waiting.nodeId)
  const hasFields = !!waiting.fields && waiting.fields.length > 0
  return (
    <form
      className="wait-card"
      data-testid="human-input"
      data-node-id={waiting.nodeId}
      onSubmit={(event) => {
        event.preventDefault()
        void submit(inputAnswer(waiting, text, fields))
      }}
    >
      <div className="wait-head">
        <span className="step-dot status-waiting" aria-hidden="true" />
        <strong>{waiting.nodeName}</strong>
        <span className="muted">asks</span>
      </div>
      <p className="wait-prompt">{waiting.prompt || 'Your answer?'}</p>
      {hasFields ? (
        waiting.fields!.map((field) =>
          field.type === 'boolean' ? (
            <label key={field.name} className="wait-check">
              <input
                type="checkbox"
                checked={fields[field.name] === true}
                onChange={(event) => setFields({ ...fields, [field.name]: event.target.checked })}
              />
              {field.label ?? field.name}
            </label>
          ) : (
            <label key={field.name} className="wait-field">
              <span>
                {field.label ?? field.name}
                {field.required !== false ? ' *' : ''}
              </span>
              <input
                type={field.type === 'number' ? 'number' : 'text'}
                required={field.required !== false}
                value={String(fields[field.name] ?? '')}
                onChange={(event) => setFields({ ...fields, [field.name]: event.target.value })}
              />
            </label>
          ),
        )
      ) : (
        <textarea
          aria-label="Answer"
          rows={2}
          value={text}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
              event.preventDefault()
              event.currentTarget.form?.requestSubmit()
            }
          }}
        />
      )}
      {error && (
        <p className="wait-error" role="alert">
          {error}
        </p>
      )}
      <div className="wait-actions">
        <button type="submit" className="primary" disabled={pending || disabled || (!hasFields && !text.trim())}>
          Send answer
        </button>
      </div>
    </form>
  )
}
