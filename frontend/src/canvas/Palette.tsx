// The palette: every node type of the catalogue, grouped by category, with a search box.
// Drag an item onto the canvas, or focus it and press Enter to add it at the centre.

import { useReactFlow } from '@xyflow/react'
import { memo, useMemo, useState } from 'react'
import type { Catalogue, NodeDefinition } from '../api/models'
import { useCanvasStore } from './store'

export const NODE_MIME = 'application/nodeloom-node'

function matches(node: NodeDefinition, query: string): boolean {
  if (!query) return true
  const q = query.toLowerCase()
  return node.name.toLowerCase().includes(q) || node.id.toLowerCase().includes(q) || node.description.toLowerCase().includes(q)
}

export const Palette = memo(function Palette({ catalogue, readOnly }: { catalogue: Catalogue; readOnly?: boolean }) {
  const [query, setQuery] = useState('')
  const store = useCanvasStore()
  const flow = useReactFlow()
  const groups = useMemo(() => {
    const byCategory = new Map<string, NodeDefinition[]>()
    for (const node of catalogue.nodes) {
      if (!matches(node, query.trim())) continue
      const list = byCategory.get(node.category)
      if (list) list.push(node)
      else byCategory.set(node.category, [node])
    }
    return [...byCategory.entries()].sort(([a], [b]) => a.localeCompare(b))
  }, [catalogue, query])

  const addAtCentre = (type: string) => {
    const pane = document.querySelector('.canvas-main .react-flow')?.getBoundingClientRect()
    const centre = pane
      ? flow.screenToFlowPosition({ x: pane.left + pane.width / 2, y: pane.top + pane.height / 2 })
      : { x: 0, y: 0 }
    store.getState().addNode(type, { x: centre.x - 140, y: centre.y - 60 })
  }

  return (
    <aside className="palette" aria-label="Node palette">
      <input
        type="search"
        className="palette-search"
        aria-label="Search nodes"
        placeholder="Search nodes…"
        value={query}
        onChange={(event) => setQuery(event.target.value)}
      />
      <div className="palette-groups">
        {groups.map(([category, nodes]) => (
          <section key={category} className="palette-group">
            <h3>{category}</h3>
            <ul role="list">
              {nodes.map((node) => (
                <li
                  key={node.id}
                  data-testid={`palette-item-${node.id}`}
                  className="palette-item"
                  tabIndex={0}
                  role="button"
                  aria-label={`Add ${node.name}`}
                  aria-disabled={readOnly || undefined}
                  title={node.description}
                  draggable={!readOnly}
                  onDragStart={(event) => {
                    event.dataTransfer.setData(NODE_MIME, node.id)
                    event.dataTransfer.effectAllowed = 'move'
                  }}
                  onKeyDown={(event) => {
                    if ((event.key === 'Enter' || event.key === ' ') && !readOnly) {
                      event.preventDefault()
                      addAtCentre(node.id)
                    }
                  }}
                  onDoubleClick={() => !readOnly && addAtCentre(node.id)}
                >
                  <span className="node-icon small" aria-hidden="true">
                    {node.name.split(/[\s-]+/).length > 1 ? node.name.split(/[\s-]+/).map((w) => w[0]).join('').slice(0, 2) : node.name.slice(0, 2)}
                  </span>
                  <span className="palette-text">
                    <span className="palette-name">{node.name}</span>
                    <span className="palette-desc">{node.description}</span>
                  </span>
                </li>
              ))}
            </ul>
          </section>
        ))}
        {groups.length === 0 && <p className="muted">No node matches “{query}”.</p>}
      </div>
    </aside>
  )
})
