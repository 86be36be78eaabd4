// The Schedule Triggers of the flow open in the editor, as the server sees them (its saved
// latest version): the next fire time the node card shows. Loaded once per saved version.

import { create } from 'zustand'
import { api } from '../api/client'

export interface ScheduleInfo {
  id: string
  node_id: string
  next_fire_at: string | null
  paused: boolean
}

interface SchedulesState {
  key: string | null // `<flow id>@<version>` loaded (or loading)
  byNode: Record<string, ScheduleInfo>
  load: (flowId: string | null, version: number | null) => void
}

export const useSchedules = create<SchedulesState>((set, get) => ({
  key: null,
  byNode: {},
  load: (flowId, version) => {
    const key = flowId ? `${flowId}@${version ?? ''}` : null
    if (key === get().key) return
    set({ key, byNode: {} })
    if (!flowId) return
    api<{ schedules: ScheduleInfo[] }>(`/api/flows/${encodeURIComponent(flowId)}/schedules`)
      .then((answer) => {
        if (get().key !== key) return // another flow or version since
        set({ byNode: Object.fromEntries(answer.schedules.map((s) => [s.node_id, s])) })
      })
      .catch(() => undefined) // an unsaved or deleted flow: no schedule to show
  },
}))

/** "next 09:00:00 (Mon 1 Dec)" in the browser's time zone, or "paused". */
export function describeSchedule(info: ScheduleInfo): string {
  if (info.paused) return 'paused'
  if (!info.next_fire_at) return 'no next tick'
  const at = new Date(info.next_fire_at)
  return `next ${at.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' })}`
}
