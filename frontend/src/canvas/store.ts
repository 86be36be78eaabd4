// A store per canvas (the flow, and each Loop body being edited): the graph, its undo
// history, the issues pinned on it, and the edits. Components subscribe narrowly.

import { applyEdgeChanges, applyNodeChanges, type EdgeChange, type NodeChange } from '@xyflow/react'
import { createContext, useContext } from 'react'
import { createStore, useStore, type StoreApi } from 'zustand'
import type { Catalogue, GraphDocument, Issue } from '../api/models'
import { copySelection, freshId, pasteClip, type Clip } from '../flow/clipboard'
import { checkConnection, socketOfHandle } from '../flow/connections'
import { toDocument, toFlow, type DocumentMeta } from '../flow/document'
import type { UpstreamNode } from '../flow/expressions'
import { emptyHistory, push, redo, undo, type History } from '../flow/history'
import { pinIssues, type PinnedIssues } from '../flow/issues'
import { layoutGraph } from '../flow/layout'
import type { FlowEdge, FlowGraph, FlowNode, Wire } from '../flow/types'

export interface CanvasState {
  catalogue: Catalogue
  /** `<loop id>/` for a Loop body (issue locations), '' for the flow. */
  prefix: string
  inLoop: boolean
  /** Inside a Loop body: the nodes upstream of the Loop, reachable by name. */
  outer: UpstreamNode[]
  nodes: FlowNode[]
  edges: FlowEdge[]
  meta: DocumentMeta
  history: History
  /** Bumps on every change that is saved (values, wires, positions once dropped). */
  revision: number
  /** Bumps on changes that can change validity (not positions). */
  contentRevision: number
  issues: PinnedIssues
  /** node id -> ' handle handle ' of its wired target handles (stable strings). */
  wired: Record<string, string>
  selectedId: string | null
  refusal: string | null

  onNodesChange: (changes: NodeChange<FlowNode>[]) => void
  onEdgesChange: (changes: EdgeChange<FlowEdge>[]) => void
  check: (wire: Wire) => ReturnType<typeof checkConnection>
  connect: (wire: Wire) => void
  record: (key?: string | null) => void
  setValue: (nodeId: string, key: string, value: unknown) => void
  addNode: (kind: string, position: { x: number; y: number }) => string
  deleteSelected: () => void
  selectAll: () => void
  copy: () => void
  paste: () => void
  undo: () => void
  redo: () => void
  layout: () => void
  replace: (document: GraphDocument) => void
  setIssues: (issues: readonly Issue[]) => void
  setRefusal: (reason: string | null) => void
  document: () => GraphDocument
}

let clipboard: Clip | null = null // shared by every canvas, so nodes paste into a Loop body

function wiredOf(edges: readonly FlowEdge[]): Record<string, string> {
  const wired: Record<string, string> = {}
  for (const edge of edges) wired[edge.target] = (wired[edge.target] ?? ' ') + `${edge.targetHandle ?? 'input'} `
  return wired
}

function styled(catalogue: Catalogue, nodes: readonly FlowNode[], edge: FlowEdge): FlowEdge {
  const source = nodes.find((n) => n.id === edge.source)
  const socket = socketOfHandle(catalogue, source, edge.sourceHandle, 'source')
  if (socket === 'data') return edge
  const color = catalogue.socket_types.find((s) => s.id === socket)?.color
  return { ...edge, style: color ? { stroke: color, strokeWidth: 2 } : undefined, className: `socket-${socket}` }
}

function markEdges(edges: FlowEdge[], byEdge: Record<string, Issue[]>): FlowEdge[] {
  return edges.map((edge) => {
    const issues = byEdge[edge.id]
    const had = edge.className?.includes('has-issue')
    if (!issues && !had) return edge
    const base = (edge.className ?? '').replace(/\s*has-issue/, '')
    return issues
      ? { ...edge, className: `${base} has-issue`, label: issues[0].code, ariaLabel: issues.map((i) => i.message).join('; ') }
      : { ...edge, className: base, label: undefined, ariaLabel: undefined }
  })
}

function selectedOf(nodes: readonly FlowNode[]): string | null {
  let found: string | null = null
  for (const node of nodes) {
    if (node.selected) {
      if (found !== null) return null
      found = node.id
    }
  }
  return found
}

export function createCanvasStore(
  catalogue: Catalogue,
  document: GraphDocument,
  options: { prefix?: string; inLoop?: boolean; outer?: UpstreamNode[] } = {},
): StoreApi<CanvasState> {
  const initial = toFlow(document)
  return createStore<CanvasState>((set, get) => {
    const graph = (): FlowGraph => ({ nodes: get().nodes, edges: get().edges })
    /** Apply a content change, recorded for undo. */
    const change = (next: Partial<FlowGraph>, key: string | null = null) => {
      const state = get()
      const edges = next.edges ?? state.edges
      set({
        ...next,
        history: push(state.history, graph(), key),
        revision: state.revision + 1,
        contentRevision: state.contentRevision + 1,
        wired: next.edges ? wiredOf(edges) : state.wired,
        selectedId: next.nodes ? selectedOf(next.nodes) : state.selectedId,
      })
    }
    const restore = (g: FlowGraph, history: History) => {
      const state = get()
      set({
        nodes: g.nodes,
        edges: g.edges,
        history,
        revision: state.revision + 1,
        contentRevision: state.contentRevision + 1,
        wired: wiredOf(g.edges),
        selectedId: selectedOf(g.nodes),
      })
    }

    return {
      catalogue,
      prefix: options.prefix ?? '',
      inLoop: options.inLoop ?? false,
      outer: options.outer ?? [],
      nodes: initial.graph.nodes,
      edges: initial.graph.edges.map((e) => styled(catalogue, initial.graph.nodes, e)),
      meta: initial.meta,
      history: emptyHistory(),
      revision: 0,
      contentRevision: 0,
      issues: pinIssues([]),
      wired: wiredOf(initial.graph.edges),
      selectedId: null,
      refusal: null,

      onNodesChange: (changes) => {
        const state = get()
        const nodes = applyNodeChanges(changes, state.nodes)
        let moved = false
        let selection = false
        for (const c of changes) {
          if (c.type === 'position' && c.dragging === false) moved = true
          if (c.type === 'select') selection = true
        }
        set({
          nodes,
          ...(moved ? { revision: state.revision + 1 } : {}),
          ...(selection ? { selectedId: selectedOf(nodes) } : {}),
        })
      },
      onEdgesChange: (changes) => {
        set({ edges: applyEdgeChanges(changes, get().edges) })
      },
      check: (wire) => {
        const { nodes, edges } = get()
        return checkConnection(catalogue, nodes, edges, wire)
      },
      connect: (wire) => {
        const state = get()
        const result = state.check(wire)
        if (!result.ok) {
          set({ refusal: result.reason })
          return
        }
        const ids = new Set(state.edges.map((e) => e.id))
        const edge: FlowEdge = styled(catalogue, state.nodes, {
          id: freshId(`e_${wire.source}_${wire.target}`, ids),
          source: wire.source,
          target: wire.target,
          sourceHandle: wire.sourceHandle ?? 'output',
          targetHandle: wire.targetHandle ?? 'input',
        })
        change({ edges: [...state.edges, edge] })
      },
      record: (key = null) => set({ history: push(get().history, graph(), key) }),
      setValue: (nodeId, key, value) => {
        const nodes = get().nodes.map((node) => {
          if (node.id !== nodeId) return node
          const values = { ...node.data.values }
          if (value === undefined) delete values[key]
          else values[key] = value
          return { ...node, data: { ...node.data, values } }
        })
        const edges = key === 'on_error' || key === 'cases' ? get().edges : undefined
        change(edges ? { nodes, edges } : { nodes }, `${nodeId}.${key}`)
      },
      addNode: (kind, position) => {
        const state = get()
        const taken = new Set(state.nodes.map((n) => n.id))
        const id = freshId(kind.replace(/[^A-Za-z0-9_]/g, '_'), taken)
        let at = position
        while (state.nodes.some((n) => Math.abs(n.position.x - at.x) < 24 && Math.abs(n.position.y - at.y) < 24)) {
          at = { x: at.x + 40, y: at.y + 40 } // never exactly on top of another node
        }
        const node: FlowNode = { id, type: 'nodeloom', position: at, selected: true, data: { kind, values: {} } }
        change({ nodes: [...state.nodes.map((n) => (n.selected ? { ...n, selected: false } : n)), node] })
        return id
      },
      deleteSelected: () => {
        const state = get()
        const gone = new Set(state.nodes.filter((n) => n.selected).map((n) => n.id))
        const edges = state.edges.filter((e) => !e.selected && !gone.has(e.source) && !gone.has(e.target))
        if (!gone.size && edges.length === state.edges.length) return
        change({ nodes: state.nodes.filter((n) => !gone.has(n.id)), edges })
      },
      selectAll: () => {
        const nodes = get().nodes.map((n) => (n.selected ? n : { ...n, selected: true }))
        set({ nodes, selectedId: selectedOf(nodes) })
      },
      copy: () => {
        clipboard = copySelection(graph())
      },
      paste: () => {
        if (!clipboard) return
        const next = pasteClip(graph(), clipboard)
        clipboard = { nodes: clipboard.nodes.map((n) => ({ ...n, position: { x: n.position.x + 40, y: n.position.y + 40 } })), edges: clipboard.edges }
        change(next)
      },
      undo: () => {
        const result = undo(get().history, graph())
        if (result) restore(result.graph, result.history)
      },
      redo: () => {
        const result = redo(get().history, graph())
        if (result) restore(result.graph, result.history)
      },
      layout: () => change({ nodes: layoutGraph(graph()) }),
      replace: (doc) => {
        const next = toFlow(doc)
        set({ meta: next.meta })
        change({ nodes: next.graph.nodes, edges: next.graph.edges.map((e) => styled(catalogue, next.graph.nodes, e)) })
      },
      setIssues: (issues) => {
        const pinned = pinIssues(issues, get().prefix)
        set({ issues: pinned, edges: markEdges(get().edges, pinned.byEdge) })
      },
      setRefusal: (reason) => set({ refusal: reason }),
      document: () => toDocument(get().meta, graph()),
    }
  })
}

export const CanvasStoreContext = createContext<StoreApi<CanvasState> | null>(null)

export function useCanvasStore(): StoreApi<CanvasState> {
  const store = useContext(CanvasStoreContext)
  if (!store) throw new Error('useCanvas outside a canvas')
  return store
}

export function useCanvas<T>(selector: (state: CanvasState) => T): T {
  return useStore(useCanvasStore(), selector)
}

/** What the Loop node's "Edit body" button calls (provided by the Editor). */
export const BodyEditorContext = createContext<((loopId: string) => void) | null>(null)
