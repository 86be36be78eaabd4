// The chat beside the canvas: send the flow a message (with the user tools picked for it),
// watch its nodes run as step cards, answer what waits for a person, read the answer (the
// conversation lives in ./session).

import { useEffect, useRef, useState } from 'react'
import { api } from '../api/client'
import type { UserTool } from '../api/models'
import { useCurrentFlow } from '../state/currentFlow'
import { useChat } from './session'
import { TurnView } from './TurnView'
import './chat.css'

const FINISHED = new Set(['completed', 'failed', 'cancelled'])

export function ChatPanel({ focus = false }: { focus?: boolean }) {
  const flowId = useCurrentFlow((s) => s.flowId)
  const flowName = useCurrentFlow((s) => s.name)
  const { turns, chatId, busy, notice, send, answer, stop, startOver, openFlow, tools, setTools } = useChat()
  const offered = useOfferedTools()
  const [text, setText] = useState('')
  const listRef = useRef<HTMLDivElement>(null)
  const stickRef = useRef(true)
  const inputRef = useRef<HTMLTextAreaElement>(null)

  useEffect(() => {
    if (focus) inputRef.current?.focus()
  }, [focus, flowId])

  useEffect(() => openFlow(flowId), [flowId, openFlow])

  useEffect(() => {
    const list = listRef.current
    if (list && stickRef.current) list.scrollTop = list.scrollHeight
  }, [turns])

  const submit = async () => {
    const message = text
    if (!message.trim() || busy) return
    stickRef.current = true
    setText('')
    const sent = await send(message)
    if (!sent) setText((now) => now || message)
  }

  const last = turns.at(-1)
  const running = busy && last !== undefined && last.runId !== null && !FINISHED.has(last.status)

  return (
    <aside className="chat-panel" aria-label="Chat">
      <header className="chat-header">
        <div className="chat-title">
          <h2>Chat</h2>
          <span className="chat-flow" title={flowId ?? undefined}>
            {flowName || (flowId ? flowId.slice(0, 8) : 'unsaved flow')}
          </span>
        </div>
        <button type="button" onClick={startOver} disabled={turns.length === 0 && !chatId}>
          New chat
        </button>
      </header>
      <div
        className="chat-messages"
        ref={listRef}
        onScroll={(event) => {
          const el = event.currentTarget
          stickRef.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40
        }}
        aria-live="polite"
      >
        {turns.length === 0 && (
          <div className="chat-empty">
            <p>
              Type a message below and press <kbd>Enter</kbd> to run{' '}
              {flowName ? <strong>{flowName}</strong> : 'this flow'}: its Chat Start passes the message on
              (for example <em>hi</em>, or a question for a flow with a model).
            </p>
            <p className="muted">Each node shows up here as it runs; open a step for its outputs.</p>
          </div>
        )}
        {turns.map((turn) => (
          <TurnView
            key={turn.key}
            turn={turn}
            onAnswer={(nodeId, value) => answer(turn.key, nodeId, value)}
            canAnswer={!busy}
          />
        ))}
      </div>
      <form
        className="chat-composer"
        onSubmit={(event) => {
          event.preventDefault()
          void submit()
        }}
      >
        {notice && (
          <p className="chat-notice" role="alert">
            {notice}
          </p>
        )}
        {offered.length > 0 && (
          <fieldset className="chat-tools" aria-label="Tools">
            <legend className="muted">Tools for this chat</legend>
            {offered.map((tool) => (
              <label key={tool.name} title={tool.description || tool.type}>
                <input
                  type="checkbox"
                  checked={tools.includes(tool.name)}
                  onChange={(event) =>
                    setTools(event.target.checked ? [...tools, tool.name] : tools.filter((t) => t !== tool.name))
                  }
                />{' '}
                {tool.name}
              </label>
            ))}
          </fieldset>
        )}
        <textarea
          ref={inputRef}
          aria-label="Message"
          placeholder="Message the flow…  (Enter sends, Shift+Enter for a new line)"
          rows={3}
          value={text}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
              event.preventDefault()
              void submit()
            }
          }}
        />
        <div className="chat-actions">
          {chatId ? (
            <span className="muted chat-id" title={chatId}>
              chat {chatId.slice(0, 8)}
            </span>
          ) : (
            <span />
          )}
          <div className="chat-buttons">
            {running && last && (
              <button type="button" className="danger" onClick={() => void stop(last.key)}>
                Stop
              </button>
            )}
            <button type="submit" className="primary" disabled={busy || !text.trim()}>
              Send
            </button>
          </div>
        </div>
      </form>
    </aside>
  )
}

/** The user tools the server offers (GET /api/tools); none when it offers none or fails. */
function useOfferedTools(): UserTool[] {
  const [offered, setOffered] = useState<UserTool[]>([])
  useEffect(() => {
    let live = true
    api<{ tools: UserTool[] }>('/api/tools')
      .then((answer) => live && setOffered(answer.tools))
      .catch(() => live && setOffered([]))
    return () => {
      live = false
    }
  }, [])
  return offered
}
