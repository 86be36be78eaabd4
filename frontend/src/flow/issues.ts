// Validation issues pinned where they belong: on a node (and its field) or an edge. Inside
// a Loop body the engine names nodes `<loop id>/<inner id>`; `prefix` picks that level.

import type { Issue } from '../api/models'

export interface PinnedIssues {
  byNode: Record<string, Issue[]>
  byEdge: Record<string, Issue[]>
  /** Issues that name no node or edge of this level (shown in the issues list). */
  general: Issue[]
  all: Issue[]
}

export function pinIssues(issues: readonly Issue[], prefix = ''): PinnedIssues {
  const pinned: PinnedIssues = { byNode: {}, byEdge: {}, general: [], all: [] }
  for (const issue of issues) {
    let placed = false
    let nodeId = issue.node_id ?? null
    if (nodeId !== null) {
      if (prefix) nodeId = nodeId.startsWith(prefix) ? nodeId.slice(prefix.length) : null
      if (nodeId !== null) {
        // An issue inside a deeper body pins on the Loop node of this level.
        const local = nodeId.split('/')[0]
        ;(pinned.byNode[local] ??= []).push(local === nodeId ? issue : { ...issue, field: 'body' })
        placed = true
      }
    } else if (prefix) continue
    if (issue.edge_id && (!prefix || issue.node_id?.startsWith(prefix))) {
      ;(pinned.byEdge[issue.edge_id] ??= []).push(issue)
      placed = true
    }
    if (!prefix || placed) pinned.all.push(issue)
    if (!placed) pinned.general.push(issue)
  }
  return pinned
}

/** Issues on one field of a node's list. */
export function fieldIssues(issues: readonly Issue[] | undefined, field: string): Issue[] {
  return issues ? issues.filter((i) => i.field === field) : []
}
