// A code parameter: a CodeMirror editor, mounted when the user opens it (500 editors on a
// big flow would be slow), otherwise a preview button. Tab is left to the browser (no
// indentWithTab), so keyboard users can leave the editor.

import { json } from '@codemirror/lang-json'
import { python } from '@codemirror/lang-python'
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from '@codemirror/autocomplete'
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands'
import { bracketMatching, defaultHighlightStyle, indentOnInput, syntaxHighlighting } from '@codemirror/language'
import { EditorView, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from '@codemirror/view'
import { useEffect, useRef, useState } from 'react'

const setup = [
  lineNumbers(),
  history(),
  highlightActiveLineGutter(),
  highlightActiveLine(),
  indentOnInput(),
  bracketMatching(),
  closeBrackets(),
  autocompletion(),
  syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
  keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap]),
]

interface Props {
  label: string
  value: string
  language?: string
  disabled?: boolean
  onChange: (value: string) => void
}

const theme = EditorView.theme(
  {
    '&': { backgroundColor: 'var(--bg)', color: 'var(--text)', fontSize: '12px', maxHeight: '260px' },
    '.cm-scroller': { overflow: 'auto' },
    '.cm-gutters': { backgroundColor: 'var(--panel)', color: 'var(--muted)', border: 'none' },
    '.cm-activeLine, .cm-activeLineGutter': { backgroundColor: 'rgb(255 255 255 / 0.04)' },
    '&.cm-focused': { outline: '2px solid var(--focus)' },
    '.cm-cursor': { borderLeftColor: 'var(--text)' },
  },
  { dark: true },
)

export function CodeField({ label, value, language, disabled, onChange }: Props) {
  const [open, setOpen] = useState(false)
  const host = useRef<HTMLDivElement>(null)
  const view = useRef<EditorView | null>(null)
  const latest = useRef(onChange)
  latest.current = onChange

  useEffect(() => {
    if (!open || !host.current) return
    const editor = new EditorView({
      doc: value,
      selection: { anchor: value.length },
      parent: host.current,
      extensions: [
        setup,
        theme,
        language === 'json' ? json() : python(),
        EditorView.editable.of(!disabled),
        EditorView.contentAttributes.of({ 'aria-label': label }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) latest.current(update.state.doc.toString())
        }),
      ],
    })
    view.current = editor
    editor.focus()
    return () => {
      editor.destroy()
      view.current = null
    }
    // The editor owns the text while open; outside changes (undo) re-sync below.
  }, [open])

  useEffect(() => {
    const editor = view.current
    if (editor && editor.state.doc.toString() !== value) {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } })
    }
  }, [value])

  if (!open) {
    return (
      <button type="button" className="nodrag code-preview" aria-label={`Edit ${label}`} onClick={() => setOpen(true)}>
        <pre>{value.split('\n').slice(0, 6).join('\n') || `# ${language ?? 'python'}`}</pre>
      </button>
    )
  }
  return (
    <div className="code-open nodrag nowheel">
      <div ref={host} className="code-editor" />
      <button type="button" className="nodrag small" onClick={() => setOpen(false)}>
        Done
      </button>
    </div>
  )
}
