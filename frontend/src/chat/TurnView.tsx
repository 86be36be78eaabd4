// One turn of the conversation: the message, the step cards, what waits, the answer.

import { useEffect, useState } from 'react'
import { hrefOf } from '../app/route'
import { JsonView } from '../runs/JsonView'
import './chat.css'
import { approvalAnswer, formatDuration, inputAnswer, summaryOf } from './format'
import type { Step, Turn, Waiting } from './model'

const STATUS_LABEL: Record<string, string> = {
  running: 'running',
  done: 'done',
  skipped: 'skipped',
  failed: 'failed',
  waiting: 'waiting',
}

export function TurnView({
  turn,
  onAnswer,
  canAnswer,
}: {
  turn: Turn
  onAnswer: (nodeId: string, value: unknown) => Promise<void>
  canAnswer: boolean
}) {
  const answer = turn.answer ?? turn.streamed
  const live = turn.answer === null && (turn.status === 'running' || turn.status === 'starting')
  return (
    <section className="chat-turn" aria-label={`Turn: ${turn.message.slice(0, 40)}`}>
      <div className="chat-user">
        <div className="bubble">{turn.message}</div>
      </div>
      {turn.steps.length > 0 && (
        <ol className="steps" aria-label="Steps">
          {turn.steps.map((step) => (
            <li key={step.nodeId}>
              <StepCard step={step} />
            </li>
          ))}
        </ol>
      )}
      {turn.status === 'starting' && turn.steps.length === 0 && <p className="muted chat-starting">Starting the run…</p>}
      {turn.waiting.map((waiting) =>
        waiting.kind === 'approval' ? (
          <ApprovalCard key={waiting.nodeId} waiting={waiting} disabled={!canAnswer} onAnswer={onAnswer} />
        ) : (
          <InputCard key={waiting.nodeId} waiting={waiting} disabled={!canAnswer} onAnswer={onAnswer} />
        ),
      )}
      {(answer || live) && (
        <div className="chat-answer" data-testid="chat-answer" data-final={turn.answer !== null ? 'true' : 'false'}>
          {answer}
          {live && <span className="caret" aria-hidden="true" />}
        </div>
      )}
      {turn.status === 'failed' && turn.error && (
        <div className="chat-error" role="alert">
          <strong>{turn.error.nodeName ? `Node “${turn.error.nodeName}” failed` : 'The run failed'}</strong>
          <span>{turn.error.message}</span>
        </div>
      )}
      {turn.status !== 'failed' && turn.error && (
        <div className="chat-error" role="alert">
          {turn.error.message}
        </div>
      )}
      <footer className="turn-footer">
        <span className={`run-badge status-${turn.status}`}>{turn.status}</span>
        {turn.usage && Object.keys(turn.usage).length > 0 && (
          <span
            className="muted"
            title={Object.entries(turn.usage)
              .map(([k, v]) => `${v} ${k.replace(/_/g, ' ')}`)
              .join(' · ')}
          >
            {turn.usage.total_tokens ?? Object.values(turn.usage).reduce((a, b) => a + b, 0)} tokens
          </span>
        )}
        {turn.runId && (
          <a href={hrefOf({ page: 'runs', runId: turn.runId })} className="open-run">
            Open run
          </a>
        )}
      </footer>
    </section>
  )
}

/** Seconds since `since` (epoch seconds), ticking while `live`. */
function useElapsedMs(since: number | null, live: boolean): number | null {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    if (!live) return
    const timer = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(timer)
  }, [live])
  return live && since !== null ? Math.max(0, now - since * 1000) : null
}

export function StepCard({ step }: { step: Step }) {
  const [open, setOpen] = useState(false)
  const elapsed = useElapsedMs(step.startedAt, step.status === 'running')
  const detailId = `step-${step.nodeId.replace(/[^a-zA-Z0-9_-]/g, '_')}-detail`
  return (
    <div className="step-card" data-testid="step-card" data-node-id={step.nodeId} data-status={step.status}>
      <div className="step-head" onClick={() => setOpen(!open)}>
        <span className={`step-dot status-${step.status}`} aria-hidden="true" />
        <span className="step-name">{step.nodeName}</span>
        <span className={`step-status status-${step.status}`}>{STATUS_LABEL[step.status]}</span>
        <span className="step-duration">
          {step.status === 'running' ? (elapsed !== null && elapsed >= 1000 ? formatDuration(elapsed) : '') : formatDuration(step.durationMs)}
        </span>
        <button
          type="button"
          className="step-toggle"
          aria-expanded={open}
          aria-controls={detailId}
          aria-label={open ? 'Hide details' : 'Show details'}
          title={open ? 'Hide details' : 'Show details'}
          onClick={(event) => {
            event.stopPropagation()
            setOpen(!open)
          }}
        >
          <span aria-hidden="true">{open ? '▾' : '▸'}</span>
        </button>
        <span className="step-summary">{summaryOf(step)}</span>
      </div>
      {step.tools.length > 0 && (
        <ul className="tool-calls" aria-label="Tool calls">
          {step.tools.map((call) => (
            <li key={call.key} className={`tool-call status-${call.status}`} data-kind={call.kind}>
              <span className="tool-name">
                <span className="tool-icon" aria-hidden="true">
                  {call.status === 'running' ? '⋯' : call.status === 'failed' ? '✕' : '✓'}
                </span>{' '}
                {call.kind === 'member' ? `${call.tool} (member agent)` : call.tool}
              </span>
              {call.kind === 'tool' && <code className="tool-args">{compact(call.arguments)}</code>}
              {call.kind === 'member' && call.status === 'running' && call.result && (
                <span className="tool-args">{oneLineTail(call.result)}</span>
              )}
              {open && call.result !== undefined && call.result !== null && call.result !== '' && (
                <pre className="tool-result">{call.result}</pre>
              )}
            </li>
          ))}
        </ul>
      )}
      {open && (
        <div className="step-detail" id={detailId}>
          <div className="step-meta muted">
            {step.nodeType} · id {step.nodeId}
            {step.pinned ? ' · pinned output' : ''}
          </div>
          {step.error && (
            <p className="step-error">
              {step.error.code ? <code>{step.error.code}</code> : null} {step.error.message}
            </p>
          )}
          {step.answer !== undefined && (
            <>
              <h4>Answer given</h4>
              <JsonView value={step.answer} />
            </>
          )}
          {step.notes.length > 0 && (
            <ul className="step-notes">
              {step.notes.map((note, i) => (
                <li key={i}>{note}</li>
              ))}
            </ul>
          )}
          {step.outputs && (
            <>
              <h4>Outputs</h4>
              <JsonView value={step.outputs} label="outputs" />
            </>
          )}
          {!step.outputs && step.tokens && (
            <>
              <h4>Streamed so far</h4>
              <pre>{step.tokens}</pre>
            </>
          )}
          {step.status === 'waiting' && step.waiting && <p className="muted">Waiting: {step.waiting.prompt}</p>}
        </div>
      )}
    </div>
  )
}

function oneLineTail(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > 70 ? `…${flat.slice(-69)}` : flat
}

function compact(value: unknown): string {
  if (value === undefined || value === null) return ''
  const text = JSON.stringify(value)
  return text.length > 80 ? `${text.slice(0, 79)}…` : text
}

type AnswerFn = (nodeId: string, value: unknown) => Promise<void>

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
