// Undo and redo: snapshots of the graph (arrays are immutable, so a snapshot is two
// references). `push` records the state before a change; typing in one field within a
// second coalesces into one step.

import type { FlowGraph } from './types'

export interface History {
  past: FlowGraph[]
  future: FlowGraph[]
  lastKey: string | null
  lastAt: number
}

const LIMIT = 200

export function emptyHistory(): History {
  return { past: [], future: [], lastKey: null, lastAt: 0 }
}

export function push(history: History, before: FlowGraph, key: string | null = null, now = Date.now()): History {
  if (key !== null && key === history.lastKey && now - history.lastAt < 1000) {
    return { ...history, lastAt: now }
  }
  const past = [...history.past, before]
  if (past.length > LIMIT) past.shift()
  return { past, future: [], lastKey: key, lastAt: now }
}

export function undo(history: History, current: FlowGraph): { history: History; graph: FlowGraph } | null {
  const previous = history.past[history.past.length - 1]
  if (!previous) return null
  return {
    history: { past: history.past.slice(0, -1), future: [current, ...history.future], lastKey: null, lastAt: 0 },
    graph: previous,
  }
}

export function redo(history: History, current: FlowGraph): { history: History; graph: FlowGraph } | null {
  const next = history.future[0]
  if (!next) return null
  return {
    history: { past: [...history.past, current], future: history.future.slice(1), lastKey: null, lastAt: 0 },
    graph: next,
  }
}
