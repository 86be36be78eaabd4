// The `?` help: the keyboard shortcuts and where the docs are.

import { useEffect } from 'react'

export const SHORTCUTS: [string, string][] = [
  ['?', 'this help'],
  ['Ctrl+S', 'save the flow'],
  ['Ctrl+Z, Ctrl+Shift+Z / Ctrl+Y', 'undo, redo'],
  ['Ctrl+C, Ctrl+V', 'copy, paste the selected nodes'],
  ['Ctrl+A', 'select every node'],
  ['Delete / Backspace', 'delete the selection'],
  ['Shift+drag, Ctrl+click', 'select an area, add to the selection'],
  ['Enter on a palette item', 'add that node'],
  ['Enter in the chat, Shift+Enter', 'send the message, a new line'],
  ['Escape', 'close this help'],
]

export const DOCS: [string, string][] = [
  ['docs/ui.md', 'this editor, the chat panel, runs, knowledge, operations, settings'],
  ['docs/semantics.md', 'how a flow runs, rule by rule'],
  ['docs/expressions.md', 'the {{ }} expression language'],
  ['docs/nodes/', 'one page per node type'],
  ['docs/models.md', 'models and providers'],
  ['docs/testing.md', 'flow tests, cassettes, evaluations, the mock LLM'],
  ['docs/observability.md', 'OpenTelemetry traces'],
  ['docs/cli.md', 'the nodeloom command'],
]

export function isHelpKey(event: KeyboardEvent): boolean {
  const target = event.target as HTMLElement | null
  const typing =
    target !== null &&
    (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName))
  return event.key === '?' && !typing && !event.ctrlKey && !event.metaKey && !event.altKey
}

export function Help({ onClose }: { onClose: () => void }) {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') onClose()
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [onClose])
  return (
    <div className="modal-backdrop" onClick={onClose}>
      <div
        className="modal help-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="help-title"
        onClick={(event) => event.stopPropagation()}
      >
        <h2 id="help-title">Keyboard shortcuts</h2>
        <table>
          <tbody>
            {SHORTCUTS.map(([keys, what]) => (
              <tr key={keys}>
                <td>
                  <kbd>{keys}</kbd>
                </td>
                <td>{what}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <p className="muted">Canvas shortcuts act while the canvas has focus.</p>
        <h2>Docs</h2>
        <p className="muted">Pages in the docs/ folder of the nodeloom repository:</p>
        <ul>
          {DOCS.map(([path, what]) => (
            <li key={path}>
              <code>{path}</code>{' '}
              {what}
            </li>
          ))}
        </ul>
        <div className="modal-actions">
          <button type="button" className="primary" autoFocus onClick={onClose}>
            Close
          </button>
        </div>
      </div>
    </div>
  )
}
