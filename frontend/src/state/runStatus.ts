// What the live run is doing, node by node: the chat panel writes it from the run's
// events, the canvas reads it to mark each node running, done, skipped, failed or waiting.

import { create } from 'zustand'
import type { RunEvent } from '../api/models'

export type NodeRunStatus = 'running' | 'done' | 'skipped' | 'failed' | 'waiting'

interface RunStatusState {
  runId: string | null
  nodes: Record<string, NodeRunStatus>
  reset: (runId: string | null) => void
  apply: (event: RunEvent) => void
}

const STATUS_OF: Record<string, NodeRunStatus> = {
  started: 'running',
  completed: 'done',
  skipped: 'skipped',
  error: 'failed',
  waiting: 'waiting',
}

const RUN_ENDS = new Set(['run_completed', 'run_failed', 'run_cancelled'])

export const useRunStatus = create<RunStatusState>((set) => ({
  runId: null,
  nodes: {},
  reset: (runId) => set({ runId, nodes: {} }),
  apply: (event) => {
    if (RUN_ENDS.has(event.event_type)) {
      // A run that ended while nodes were still running or waiting (cancelled, or failed
      // elsewhere): they will never complete.
      set((state) => ({
        nodes: Object.fromEntries(
          Object.entries(state.nodes).map(([id, status]) => [
            id,
            status === 'running' || status === 'waiting' ? 'skipped' : status,
          ]),
        ),
      }))
      return
    }
    const status = STATUS_OF[event.event_type]
    if (!status || !event.node_id) return
    set((state) => ({ nodes: { ...state.nodes, [event.node_id as string]: status } }))
  },
}))
