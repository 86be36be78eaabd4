// The node catalogue (GET /api/nodes), loaded once: every node renders from it.

import { create } from 'zustand'
import { api } from '../api/client'
import type { Catalogue, NodeDefinition, SocketType } from '../api/models'

interface CatalogueState {
  catalogue: Catalogue | null
  error: string | null
  load: () => Promise<void>
}

export const useCatalogue = create<CatalogueState>((set) => ({
  catalogue: null,
  error: null,
  load: async () => {
    try {
      set({ catalogue: await api<Catalogue>('/api/nodes'), error: null })
    } catch (error) {
      set({ error: (error as Error).message })
    }
  },
}))

export function definitionOf(catalogue: Catalogue, type: string): NodeDefinition | undefined {
  return catalogue.nodes.find((node) => node.id === type)
}

export function socketOf(catalogue: Catalogue, id: string): SocketType | undefined {
  return catalogue.socket_types.find((socket) => socket.id === id)
}
