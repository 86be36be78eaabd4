// The runs linked to this one (docs/automations.md): the run whose node started it (an
// Execute Flow, a Flow Tool's call, an error flow) and the runs its nodes started.

import { hrefOf } from '../app/route'

export interface ChildRunLink {
  id: string
  status: string
  flow_id: string | null
  flow_version: number | null
  parent_node: string | null
  created_at: string
}

function started(node: string | null): string {
  return node === '$error_flow' ? 'as its error flow' : node ? `by node ${node}` : ''
}

export function RunLinks({
  parentRunId,
  parentNode,
  children,
}: {
  parentRunId: string | null | undefined
  parentNode: string | null | undefined
  children: ChildRunLink[] | undefined
}) {
  if (!parentRunId && !children?.length) return null
  return (
    <div className="run-links" data-testid="run-links">
      {parentRunId && (
        <span>
          Parent run{' '}
          <a href={hrefOf({ page: 'runs', runId: parentRunId })} className="mono">
            {parentRunId.slice(0, 8)}
          </a>{' '}
          <span className="muted">(started {started(parentNode ?? null)})</span>
        </span>
      )}
      {children && children.length > 0 && (
        <span>
          Child runs:{' '}
          {children.map((child, i) => (
            <span key={child.id}>
              {i > 0 && ', '}
              <a href={hrefOf({ page: 'runs', runId: child.id })} className="mono" title={started(child.parent_node)}>
                {child.id.slice(0, 8)}
              </a>{' '}
              <span className={`status status-${child.status}`}>{child.status}</span>
            </span>
          ))}
        </span>
      )}
    </div>
  )
}
