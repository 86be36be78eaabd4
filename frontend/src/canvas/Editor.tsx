// The canvas editor: loads a flow (or starts a new one), shows the toolbar, the palette,
// the canvas of the level being edited (the flow, or a Loop body), the node settings, and
// saves. Each level has its own store; a body's edits are written back into its Loop.

import { ReactFlowProvider, useReactFlow } from '@xyflow/react'
import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import { useStore, type StoreApi } from 'zustand'
import { api, ApiError } from '../api/client'
import type { Catalogue, FlowSummary, FlowVersion, GraphDocument, Issue } from '../api/models'
import { navigate } from '../app/route'
import { asInnerDocument } from '../flow/document'
import { upstreamNodes } from '../flow/expressions'
import { displayName } from '../flow/types'
import { useCatalogue } from '../state/catalogue'
import { useCurrentFlow } from '../state/currentFlow'
import { Canvas } from './Canvas'
import { Palette } from './Palette'
import { BodyEditorContext, CanvasStoreContext, createCanvasStore, type CanvasState } from './store'
import { Toolbar, type SaveState } from './Toolbar'
import './canvas.css'

interface Loaded {
  key: number
  flowId: string | null
  name: string
  version: number | null
  document: GraphDocument
  viewing: number | null
}

const EMPTY: GraphDocument = { nodes: [], edges: [] }

export function Editor({ flowId }: { flowId: string | null }) {
  const catalogue = useCatalogue((s) => s.catalogue)
  const [loaded, setLoaded] = useState<Loaded | null>(null)
  const [error, setError] = useState<string | null>(null)
  const created = useRef<string | null>(null)
  const keyRef = useRef(0)

  const load = useCallback(async (id: string | null, version?: number) => {
    setError(null)
    if (!id) {
      setLoaded({ key: ++keyRef.current, flowId: null, name: 'Untitled flow', version: null, document: EMPTY, viewing: null })
      return
    }
    try {
      const query = version ? `?version=${version}` : ''
      const flow = await api<FlowVersion>(`/api/flows/${encodeURIComponent(id)}${query}`)
      setLoaded({ key: ++keyRef.current, flowId: flow.flow_id, name: flow.name, version: flow.version, document: flow.document, viewing: version ?? null })
    } catch (exc) {
      setError(`Could not open flow '${id}': ${(exc as Error).message}`)
      setLoaded(null)
    }
  }, [])

  useEffect(() => {
    if (flowId && flowId === created.current) return // we just saved it: keep the canvas as it is
    created.current = null
    void load(flowId)
  }, [flowId, load])

  if (!catalogue) return <main className="editor" />
  if (error) {
    return (
      <main className="editor">
        <p className="banner error" role="alert">
          {error}
        </p>
        <p className="editor-empty">
          <button type="button" onClick={() => navigate({ page: 'editor', flowId: null })}>
            New flow
          </button>
        </p>
      </main>
    )
  }
  if (!loaded) return <main className="editor editor-loading">Loading…</main>
  return (
    <LoadedEditor
      key={loaded.key}
      catalogue={catalogue}
      loaded={loaded}
      flowId={flowId ?? loaded.flowId}
      onCreated={(id) => {
        created.current = id
        navigate({ page: 'editor', flowId: id })
      }}
      onReload={(id, version) => void load(id, version)}
    />
  )
}

interface Level {
  store: StoreApi<CanvasState>
  title: string
  loopId: string | null
}

function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName)
}

function LoadedEditor({
  catalogue,
  loaded,
  flowId,
  onCreated,
  onReload,
}: {
  catalogue: Catalogue
  loaded: Loaded
  flowId: string | null
  onCreated: (id: string) => void
  onReload: (id: string | null, version?: number) => void
}) {
  const root = useMemo(() => createCanvasStore(catalogue, loaded.document), [catalogue, loaded])
  const [levels, setLevels] = useState<Level[]>(() => [{ store: root, title: 'Flow', loopId: null }])
  const [name, setName] = useState(loaded.name)
  const [version, setVersion] = useState(loaded.version)
  const [viewing, setViewing] = useState(loaded.viewing)
  const [savedRevision, setSavedRevision] = useState(0)
  const [savedName, setSavedName] = useState(loaded.name)
  const [saving, setSaving] = useState(false)
  const [message, setMessage] = useState<{ kind: 'error' | 'info'; text: string } | null>(null)
  const [flows, setFlows] = useState<FlowSummary[]>([])
  const lastIssues = useRef<Issue[]>([])
  const revision = useStore(root, (s) => s.revision)
  const contentRevision = useStore(root, (s) => s.contentRevision)
  const dirty = revision !== savedRevision || (flowId !== null && name !== savedName)
  const current = levels[levels.length - 1]

  const refreshFlows = useCallback(() => {
    api<{ flows: FlowSummary[] }>('/api/flows')
      .then((answer) => setFlows(answer.flows))
      .catch(() => undefined)
  }, [])
  useEffect(refreshFlows, [refreshFlows])

  // Issues: pinned on every level open (each takes the ones under its Loop).
  const applyIssues = useCallback(
    (issues: Issue[]) => {
      lastIssues.current = issues
      for (const level of levels) level.store.getState().setIssues(issues)
    },
    [levels],
  )

  // Live validation, debounced, never on a drag frame (positions do not bump contentRevision).
  useEffect(() => {
    const timer = setTimeout(() => {
      api<{ valid: boolean; issues: Issue[] }>('/api/validate', { method: 'POST', json: { document: root.getState().document() } })
        .then((answer) => applyIssues(answer.issues))
        .catch(() => undefined)
    }, contentRevision === 0 ? 50 : 700)
    return () => clearTimeout(timer)
  }, [contentRevision, root, applyIssues])

  // A body level writes its graph back into its Loop's `body` on every change.
  useEffect(() => {
    const unsubscribes = levels.slice(1).map((level, i) => {
      const parent = levels[i].store
      return level.store.subscribe((state, previous) => {
        if (state.revision !== previous.revision && level.loopId) {
          const { nodes, edges, ...rest } = state.document()
          parent.getState().setValue(level.loopId, 'body', { ...rest, nodes, edges })
        }
      })
    })
    return () => unsubscribes.forEach((u) => u())
  }, [levels])

  const openBody = useCallback(
    (loopId: string) => {
      const top = levels[levels.length - 1]
      const node = top.store.getState().nodes.find((n) => n.id === loopId)
      if (!node) return
      const store = createCanvasStore(catalogue, asInnerDocument(node.data.values.body), {
        prefix: `${top.store.getState().prefix}${loopId}/`,
        inLoop: true,
        outer: [
          ...upstreamNodes(catalogue, top.store.getState().nodes, top.store.getState().edges, loopId).map((n) => ({ ...n, direct: false })),
          ...top.store.getState().outer,
        ],
      })
      store.getState().setIssues(lastIssues.current)
      const title = displayName(loopId, node.data.values)
      top.store.getState().record()
      setLevels([...levels, { store, title, loopId }])
    },
    [catalogue, levels],
  )

  const goUp = useCallback((depth: number) => setLevels((stack) => stack.slice(0, depth + 1)), [])

  const save = useCallback(async (): Promise<string> => {
    const atRevision = root.getState().revision
    const document = { ...root.getState().document(), name: name.trim() || 'Untitled flow' }
    setSaving(true)
    setMessage(null)
    try {
      const saved = flowId
        ? await api<FlowVersion>(`/api/flows/${encodeURIComponent(flowId)}`, { method: 'PUT', json: { document, name: document.name } })
        : await api<FlowVersion>('/api/flows', { method: 'POST', json: { name: document.name, document } })
      setSavedRevision(atRevision)
      setVersion(saved.version)
      setViewing(null)
      setSavedName(saved.name)
      applyIssues([])
      refreshFlows()
      if (!flowId) onCreated(saved.flow_id)
      return saved.flow_id
    } catch (exc) {
      if (exc instanceof ApiError && exc.issues.length) {
        applyIssues(exc.issues)
        setMessage({ kind: 'error', text: `Not saved: ${exc.issues.length} problem${exc.issues.length === 1 ? '' : 's'} — see the marked nodes.` })
      } else setMessage({ kind: 'error', text: `Not saved: ${(exc as Error).message}` })
      throw exc
    } finally {
      setSaving(false)
    }
  }, [root, name, flowId, applyIssues, refreshFlows, onCreated])

  const saveRef = useRef(save)
  saveRef.current = save
  useEffect(() => {
    useCurrentFlow.getState().set({ flowId, name, version, dirty, save: () => saveRef.current() })
  }, [flowId, name, version, dirty])
  useEffect(() => () => useCurrentFlow.getState().set({ save: null }), [])

  // Keyboard shortcuts act on the level being edited.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const mod = event.ctrlKey || event.metaKey
      const key = event.key.toLowerCase()
      if (mod && key === 's') {
        event.preventDefault()
        void saveRef.current().catch(() => undefined)
        return
      }
      if (isTyping(event.target) || !document.querySelector('.canvas-main')) return
      const state = current.store.getState()
      // Selection shortcuts only where the selection is: the canvas (or nothing) focused.
      const target = event.target
      const onCanvas = target === document.body || (target instanceof Element && target.closest('.canvas-main') !== null)
      const selectionKey = (mod && ['c', 'v', 'a'].includes(key)) || (!mod && (event.key === 'Delete' || event.key === 'Backspace'))
      if (selectionKey && !onCanvas) return
      if (mod && key === 'z' && !event.shiftKey) state.undo()
      else if (mod && ((key === 'z' && event.shiftKey) || key === 'y')) state.redo()
      else if (mod && key === 'c') state.copy()
      else if (mod && key === 'v') state.paste()
      else if (mod && key === 'a') state.selectAll()
      else if (!mod && (event.key === 'Delete' || event.key === 'Backspace')) state.deleteSelected()
      else return
      event.preventDefault()
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [current])

  useEffect(() => {
    if (message?.kind !== 'info') return
    const timer = setTimeout(() => setMessage(null), 4000)
    return () => clearTimeout(timer)
  }, [message])

  const saveState: SaveState = saving ? 'saving' : dirty ? 'dirty' : version ? 'saved' : 'new'

  return (
    <main className="editor">
      <ReactFlowProvider key={levels.length}>
        <CanvasStoreContext.Provider value={current.store}>
          <BodyEditorContext.Provider value={openBody}>
            <Toolbar
              catalogue={catalogue}
              flowId={flowId}
              flows={flows}
              name={name}
              onName={setName}
              version={version}
              saveState={saveState}
              dirty={dirty}
              onSave={() => void save().catch(() => undefined)}
              onOpenVersion={(v) => flowId && onReload(flowId, v)}
              onNewFlow={() => {
                if (dirty && !window.confirm('Discard the unsaved changes?')) return
                if (flowId) navigate({ page: 'editor', flowId: null })
                else onReload(null)
              }}
              onOpenFlow={(id) => {
                if (dirty && !window.confirm('Discard the unsaved changes?')) return
                navigate({ page: 'editor', flowId: id || null })
              }}
              onImported={(document, issues) => {
                setLevels([{ store: root, title: 'Flow', loopId: null }])
                root.getState().replace(document)
                if (typeof document.name === 'string' && !flowId) setName(document.name)
                applyIssues(issues)
                if (document.nodes.some((n) => !n.position)) setTimeout(() => root.getState().layout(), 100)
                setMessage({ kind: issues.length ? 'error' : 'info', text: issues.length ? `Imported with ${issues.length} problem(s).` : 'Imported.' })
              }}
              onMessage={setMessage}
              rootStore={root}
            />
            {viewing !== null && (
              <p className="banner info" role="status">
                Viewing version {viewing}. Saving makes it the newest version.
              </p>
            )}
            {message && (
              <p className={`banner ${message.kind}`} role={message.kind === 'error' ? 'alert' : 'status'}>
                {message.text}
                <button type="button" className="small" aria-label="Dismiss" onClick={() => setMessage(null)}>
                  ×
                </button>
              </p>
            )}
            {levels.length > 1 && (
              <nav className="breadcrumb" aria-label="Breadcrumb">
                <button type="button" className="small" onClick={() => goUp(levels.length - 2)}>
                  ← Back
                </button>
                {levels.map((level, i) => (
                  <span key={i}>
                    {i > 0 && <span className="sep"> › </span>}
                    {i < levels.length - 1 ? (
                      <button type="button" className="link" onClick={() => goUp(i)}>
                        {level.title}
                      </button>
                    ) : (
                      <strong aria-current="page">{level.title}</strong>
                    )}
                  </span>
                ))}
              </nav>
            )}
            <div className="editor-body">
              <Palette catalogue={catalogue} />
              <Canvas catalogue={catalogue} />
            </div>
            <FitOnLevel depth={levels.length} />
          </BodyEditorContext.Provider>
        </CanvasStoreContext.Provider>
      </ReactFlowProvider>
    </main>
  )
}

function FitOnLevel({ depth }: { depth: number }) {
  const flow = useReactFlow()
  useEffect(() => {
    const timer = setTimeout(() => void flow.fitView({ padding: 0.15, maxZoom: 1 }), 50)
    return () => clearTimeout(timer)
  }, [depth, flow])
  return null
}
