// One turn of the conversation: the message, the step cards, what waits, the answer.

import { useEffect, useState } from 'react'
import { hrefOf } from '../app/route'
import { FileRefs } from '../components/FileRefs'
import { JsonView } from '../components/JsonView'
import { formatDuration } from '../components/time'
import { ApprovalCard, InputCard } from '../components/WaitingCards'
import './chat.css'
import { summaryOf } from './format'
import type { Step, Turn } from './model'

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
            <li key={step.key}>
              <StepCard step={step} runId={turn.runId} />
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

export function StepCard({ step, runId }: { step: Step; runId?: string | null }) {
  const [open, setOpen] = useState(false)
  const elapsed = useElapsedMs(step.startedAt, step.status === 'running')
  const detailId = `step-${step.key.replace(/[^a-zA-Z0-9_-]/g, '_')}-detail`
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
              {call.progress && call.progress.length > 0 && (
                <ul className="tool-progress" aria-label={`Steps of ${call.tool}`}>
                  {call.progress.map((line, i) => (
                    <li key={i}>{line}</li>
                  ))}
                  {call.childRunId && (
                    <li>
                      <a href={hrefOf({ page: 'runs', runId: call.childRunId })}>child run {call.childRunId.slice(0, 8)}</a>
                    </li>
                  )}
                </ul>
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
              {runId && <FileRefs value={step.outputs} runId={runId} />}
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
