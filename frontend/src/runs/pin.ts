// Pinned outputs (docs/durable-runs.md#pinned-outputs): a node's `data.pinned` =
// {port: value} makes runs use that value instead of running it. Pinning saves a new
// version of the flow, made from its latest version (so later edits are kept).

import { api } from '../api/client'
import type { FlowVersion, GraphDocument } from '../api/models'

export function pinnedOf(document: GraphDocument, nodeId: string): Record<string, unknown> | undefined {
  const node = document.nodes.find((n) => n.id === nodeId)
  const pinned = node?.data?.pinned
  return pinned && typeof pinned === 'object' ? (pinned as Record<string, unknown>) : undefined
}

/** The document with the node's `data.pinned` set (or removed with `outputs` null). */
export function withPinned(document: GraphDocument, nodeId: string, outputs: Record<string, unknown> | null): GraphDocument {
  if (!document.nodes.some((n) => n.id === nodeId)) {
    throw new Error(`The latest version of the flow has no node '${nodeId}'`)
  }
  return {
    ...document,
    nodes: document.nodes.map((node) => {
      if (node.id !== nodeId) return node
      const data = { ...(node.data ?? {}) }
      if (outputs === null) delete data.pinned
      else data.pinned = outputs
      return { ...node, data }
    }),
  }
}

async function save(flowId: string, nodeId: string, outputs: Record<string, unknown> | null): Promise<FlowVersion> {
  const path = `/api/flows/${encodeURIComponent(flowId)}`
  const latest = await api<FlowVersion>(path)
  return api<FlowVersion>(path, { method: 'PUT', json: { document: withPinned(latest.document, nodeId, outputs) } })
}

export function pinOutputs(flowId: string, nodeId: string, outputs: Record<string, unknown>): Promise<FlowVersion> {
  return save(flowId, nodeId, outputs)
}

export function unpinOutputs(flowId: string, nodeId: string): Promise<FlowVersion> {
  return save(flowId, nodeId, null)
}
