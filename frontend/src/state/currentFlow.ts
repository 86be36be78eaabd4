// The flow open in the editor, as the other panels see it. The canvas owns it: it sets
// the id and version once loaded or saved, `dirty` while there are unsaved changes, and
// `save` (which saves a new version and resolves to the flow id). The chat panel saves
// before it runs a dirty flow, so what runs is what is on the canvas.

import { create } from 'zustand'

interface CurrentFlowState {
  flowId: string | null
  name: string
  version: number | null
  dirty: boolean
  save: (() => Promise<string>) | null
  set: (patch: Partial<Omit<CurrentFlowState, 'set'>>) => void
}

export const useCurrentFlow = create<CurrentFlowState>((set) => ({
  flowId: null,
  name: '',
  version: null,
  dirty: false,
  save: null,
  set: (patch) => set(patch),
}))
