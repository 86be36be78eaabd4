// The editor's toolbar: open / new / name / save, versions, import / export, undo / redo,
// auto layout, fit view, the validation summary and the keyboard shortcuts.

import { useReactFlow } from '@xyflow/react'
import { useEffect, useRef, useState } from 'react'
import type { StoreApi } from 'zustand'
import { api } from '../api/client'
import type { Catalogue, FlowSummary, GraphDocument, Issue } from '../api/models'
import { useCanvas, type CanvasState } from './store'

export type SaveState = 'saving' | 'dirty' | 'saved' | 'new'

interface Props {
  catalogue: Catalogue
  flowId: string | null
  flows: FlowSummary[]
  name: string
  onName: (name: string) => void
  version: number | null
  saveState: SaveState
  dirty: boolean
  onSave: () => void
  onOpenVersion: (version: number) => void
  onNewFlow: () => void
  onOpenFlow: (id: string) => void
  onImported: (document: GraphDocument, issues: Issue[]) => void
  onMessage: (message: { kind: 'error' | 'info'; text: string } | null) => void
  rootStore: StoreApi<CanvasState>
}

const SHORTCUTS: [string, string][] = [
  ['Ctrl+S', 'Save'],
  ['Ctrl+Z', 'Undo'],
  ['Ctrl+Shift+Z / Ctrl+Y', 'Redo'],
  ['Ctrl+C / Ctrl+V', 'Copy / paste nodes'],
  ['Ctrl+A', 'Select all'],
  ['Delete / Backspace', 'Delete the selection'],
  ['Shift+drag', 'Select an area'],
  ['Ctrl+click', 'Add to the selection'],
  ['Enter (on a palette item)', 'Add the node at the centre'],
  ['{{ in a field', 'Expression suggestions (↑ ↓ Enter)'],
]

/** A native JSON document that did not validate: opened as it is, to be fixed here. */
function nativeDraft(text: string): GraphDocument | null {
  try {
    const parsed = JSON.parse(text) as unknown
    if (parsed && typeof parsed === 'object' && Array.isArray((parsed as GraphDocument).nodes)) {
      return parsed as GraphDocument
    }
  } catch {
    // not JSON: YAML that did not validate has nothing to open
  }
  return null
}

export function Toolbar(props: Props) {
  const { flowId, flows, name, onName, version, saveState, onSave, onMessage } = props
  const flow = useReactFlow()
  const canUndo = useCanvas((s) => s.history.past.length > 0)
  const canRedo = useCanvas((s) => s.history.future.length > 0)
  const issueCount = useCanvas((s) => s.issues.all.length)
  const issues = useCanvas((s) => s.issues)
  const undo = useCanvas((s) => s.undo)
  const redo = useCanvas((s) => s.redo)
  const layout = useCanvas((s) => s.layout)
  const [help, setHelp] = useState(false)
  const [showIssues, setShowIssues] = useState(false)
  const [versions, setVersions] = useState<{ version: number; created_at: string; name: string }[] | null>(null)
  const fileInput = useRef<HTMLInputElement>(null)
  const nameInput = useRef<HTMLInputElement>(null)
  useEffect(() => {
    if (!flowId) nameInput.current?.select() // a new flow: name it first
  }, [])

  const openVersions = async () => {
    if (!flowId) return
    try {
      const answer = await api<{ versions: { version: number; created_at: string; name: string }[] }>(
        `/api/flows/${encodeURIComponent(flowId)}/versions`,
      )
      setVersions(answer.versions)
    } catch (exc) {
      onMessage({ kind: 'error', text: `Could not list versions: ${(exc as Error).message}` })
    }
  }

  const exportJson = () => {
    const document = { ...props.rootStore.getState().document(), name }
    const blob = new Blob([JSON.stringify(document, null, 2) + '\n'], { type: 'application/json' })
    const url = URL.createObjectURL(blob)
    const link = Object.assign(window.document.createElement('a'), {
      href: url,
      download: `${(name || 'flow').replace(/[^\w.-]+/g, '_')}.json`,
    })
    link.click()
    setTimeout(() => URL.revokeObjectURL(url), 1000)
  }

  // The server reads the file's text (JSON or YAML, any format nodeloom loads) and answers
  // the native document when it is valid; an invalid native graph still opens, with its
  // issues pinned, so it can be fixed here.
  const importFile = async (file: File) => {
    const text = await file.text()
    try {
      const answer = await api<{ valid: boolean; issues: Issue[]; document?: GraphDocument | null }>(
        '/api/validate',
        { method: 'POST', json: { document: text } },
      )
      const native = answer.document ?? nativeDraft(text)
      if (!native) {
        onMessage({
          kind: 'error',
          text: `${file.name}: ${answer.issues.map((i) => i.message).join('; ') || 'not a graph nodeloom reads'}`,
        })
        return
      }
      props.onImported(native, answer.issues)
    } catch (exc) {
      onMessage({ kind: 'error', text: `Import of ${file.name} failed: ${(exc as Error).message}` })
    }
  }

  const statusText =
    saveState === 'saving' ? 'Saving…' : saveState === 'dirty' ? 'Unsaved changes' : saveState === 'saved' ? `Saved v${version}` : 'Not saved yet'

  return (
    <div
      className="canvas-toolbar"
      role="toolbar"
      aria-label="Flow"
      onKeyDown={(event) => {
        if (event.key === 'Escape') {
          setHelp(false)
          setShowIssues(false)
          setVersions(null)
        }
      }}
    >
      <div className="tool-group">
        <select aria-label="Open flow" value={flowId ?? ''} onChange={(event) => props.onOpenFlow(event.target.value)}>
          <option value="">{flowId ? '— open a flow —' : '(new flow)'}</option>
          {flows.map((f) => (
            <option key={f.id} value={f.id}>
              {f.name}
            </option>
          ))}
        </select>
        <button type="button" onClick={props.onNewFlow}>
          New flow
        </button>
        <input
          ref={nameInput}
          aria-label="Flow name"
          className="flow-name"
          value={name}
          onChange={(event) => onName(event.target.value)}
          placeholder="Flow name"
        />
        <button type="button" className="primary" onClick={onSave} disabled={saveState === 'saving'}>
          Save
        </button>
        <span className={`save-status ${saveState}`} data-testid="save-status" aria-live="polite">
          {statusText}
        </span>
      </div>
      <div className="tool-group">
        <button type="button" onClick={undo} disabled={!canUndo} title="Undo (Ctrl+Z)">
          Undo
        </button>
        <button type="button" onClick={redo} disabled={!canRedo} title="Redo (Ctrl+Shift+Z)">
          Redo
        </button>
        <button
          type="button"
          onClick={() => {
            layout()
            setTimeout(() => void flow.fitView({ padding: 0.15, maxZoom: 1, duration: 200 }), 30)
          }}
        >
          Auto layout
        </button>
        <button type="button" onClick={() => void flow.fitView({ padding: 0.15, maxZoom: 1, duration: 200 })}>
          Fit view
        </button>
      </div>
      <div className="tool-group">
        <button type="button" onClick={() => void openVersions()} disabled={!flowId}>
          Versions
        </button>
        <button type="button" onClick={exportJson}>
          Export
        </button>
        <button type="button" onClick={() => fileInput.current?.click()}>
          Import
        </button>
        <input
          ref={fileInput}
          type="file"
          accept=".json,.yaml,.yml,application/json"
          hidden
          aria-label="Import file"
          onChange={(event) => {
            const file = event.target.files?.[0]
            event.target.value = ''
            if (file) void importFile(file)
          }}
        />
      </div>
      <div className="tool-group right">
        <div className="popover-anchor">
          <button
            type="button"
            className={`issues-button ${issueCount ? 'bad' : 'good'}`}
            aria-expanded={showIssues}
            onClick={() => setShowIssues(!showIssues)}
          >
            {issueCount ? `${issueCount} issue${issueCount === 1 ? '' : 's'}` : 'Valid'}
          </button>
          {showIssues && issueCount > 0 && (
            <div className="popover issues-popover" role="dialog" aria-label="Issues">
              <ul>
                {issues.all.map((issue, i) => (
                  <li key={i}>
                    <code>{issue.code}</code> {issue.node_id && <strong>{issue.node_id}</strong>} {issue.message}
                  </li>
                ))}
              </ul>
            </div>
          )}
        </div>
        <div className="popover-anchor">
          <button type="button" aria-expanded={help} aria-label="Keyboard shortcuts" onClick={() => setHelp(!help)}>
            ?
          </button>
          {help && (
            <div className="popover" role="dialog" aria-label="Keyboard shortcuts">
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
            </div>
          )}
        </div>
      </div>
      {versions && (
        <div className="modal-backdrop" onClick={() => setVersions(null)}>
          <div className="modal" role="dialog" aria-labelledby="versions-title" onClick={(event) => event.stopPropagation()}>
            <h2 id="versions-title">Versions of {name}</h2>
            <ul className="versions">
              {[...versions].reverse().map((v) => (
                <li key={v.version}>
                  <span>
                    <strong>v{v.version}</strong> {new Date(v.created_at).toLocaleString()}
                    {v.version === version && <em> (open)</em>}
                  </span>
                  <button
                    type="button"
                    className="small"
                    autoFocus={v.version === version}
                    onClick={() => {
                      if (props.dirty && !window.confirm('Discard the unsaved changes?')) return
                      setVersions(null)
                      props.onOpenVersion(v.version)
                    }}
                  >
                    Open
                  </button>
                </li>
              ))}
            </ul>
            <div className="modal-actions">
              <button type="button" onClick={() => setVersions(null)}>
                Close
              </button>
            </div>
          </div>
        </div>
      )}
    </div>
  )
}
