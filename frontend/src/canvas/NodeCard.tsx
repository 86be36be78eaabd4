// The one node component: every node type renders from its NodeDefinition, so a new node
// folder appears on the canvas with no frontend change.

import { Handle, Position, type NodeProps } from '@xyflow/react'
import { memo, useCallback, useEffect, useState, type CSSProperties } from 'react'
import type { Catalogue, Issue, Parameter, Port } from '../api/models'
import { fieldIssues } from '../flow/issues'
import { definitionFor, inputPorts, outputPorts } from '../flow/ports'
import { displayName, type FlowNode } from '../flow/types'
import { useCatalogue } from '../state/catalogue'
import { useCurrentFlow } from '../state/currentFlow'
import { useRunStatus } from '../state/runStatus'
import { describeSchedule, useSchedules } from '../state/schedules'
import { ParamField } from './ParamField'
import { useCanvas } from './store'

const NO_ISSUES: Issue[] = []

function socketStyle(catalogue: Catalogue, socket: string): { className: string; style: CSSProperties } {
  const type = catalogue.socket_types.find((s) => s.id === socket)
  return {
    className: `socket socket-${type?.shape ?? 'circle'} socket-type-${socket}`,
    style: { '--socket-color': type?.color ?? '#9aa3b2' } as CSSProperties,
  }
}

function initials(name: string): string {
  const words = name.split(/[\s-]+/).filter(Boolean)
  return (words.length > 1 ? words[0][0] + words[1][0] : name.slice(0, 2)).toUpperCase()
}

function PortRow({ catalogue, input, output }: { catalogue: Catalogue; input?: Port; output?: Port }) {
  return (
    <div className="port-row">
      {input && (
        <>
          <Handle type="target" position={Position.Left} id={input.id} {...socketStyle(catalogue, input.socket)} title={`${input.label || input.id} (${input.socket})`} />
          <span className="port-label in" title={input.description}>
            {input.label || input.id}
            {input.socket !== 'data' && input.socket !== input.id && <em> {input.socket}</em>}
          </span>
        </>
      )}
      {output && (
        <>
          <span className="port-label out" title={output.description}>
            {output.socket !== 'data' && output.socket !== output.id && <em>{output.socket} </em>}
            {output.label || output.id}
          </span>
          <Handle type="source" position={Position.Right} id={output.id} {...socketStyle(catalogue, output.socket)} title={`${output.label || output.id} (${output.socket})`} />
        </>
      )}
    </div>
  )
}

/** The common parameters (name, on_error, retry, ...): a collapsible section of the node. */
function Settings({ catalogue, id, values, issues, onChange }: { catalogue: Catalogue; id: string; values: Record<string, unknown>; issues: Issue[]; onChange: (key: string, value: unknown) => void }) {
  const [open, setOpen] = useState(false)
  const settingIssues = issues.filter((i) => catalogue.common_parameters.some((p) => p.id === i.field))
  return (
    <div className="node-settings">
      <button type="button" className="nodrag section-toggle" aria-expanded={open || settingIssues.length > 0} onClick={() => setOpen(!open)}>
        {open || settingIssues.length > 0 ? '▾' : '▸'} Settings
      </button>
      {(open || settingIssues.length > 0) && (
        <div className="node-params">
          {catalogue.common_parameters.map((parameter) => (
            <div key={parameter.id} className="param-row">
              <ParamField nodeId={id} parameter={parameter} value={values[parameter.id]} issues={fieldIssues(issues, parameter.id)} onChange={onChange} />
            </div>
          ))}
        </div>
      )}
    </div>
  )
}

/** A Schedule Trigger's next fire time, from the server (the saved version's schedule). */
function NextFire({ id }: { id: string }) {
  const flowId = useCurrentFlow((s) => s.flowId)
  const version = useCurrentFlow((s) => s.version)
  const info = useSchedules((s) => s.byNode[id])
  const load = useSchedules((s) => s.load)
  useEffect(() => load(flowId, version), [flowId, version, load])
  if (!info) return null
  return (
    <p className="node-schedule" data-testid="next-fire" title={info.next_fire_at ?? undefined}>
      {describeSchedule(info)}
    </p>
  )
}

function NodeCardView({ id, data, selected }: NodeProps<FlowNode>) {
  const catalogue = useCatalogue((s) => s.catalogue) as Catalogue
  const prefix = useCanvas((s) => s.prefix) // inside a Loop body, events name `<loop>/<id>`
  const status = useRunStatus((s) => s.nodes[prefix + id])
  const issues = useCanvas((s) => s.issues.byNode[id] ?? NO_ISSUES)
  const wired = useCanvas((s) => s.wired[id] ?? '')
  const setValue = useCanvas((s) => s.setValue)
  const onChange = useCallback((key: string, value: unknown) => setValue(id, key, value), [id, setValue])
  const definition = definitionFor(catalogue, data.kind)
  const [more, setMore] = useState(false)
  // Inline from the start: what must be set, can be wired, is already set, or is the node's
  // code or body; the rest sit under "more" (fixed at mount, so a field never jumps away).
  const [primaryIds] = useState(
    () =>
      new Set(
        (definition?.parameters ?? [])
          .filter((p) => p.required || p.hybrid || p.type === 'code' || p.type === 'graph' || data.values[p.id] !== undefined)
          .map((p) => p.id),
      ),
  )
  const name = displayName(id, data.values)
  const className = ['node-card', selected ? 'selected' : '', status ? `status-${status}` : '', issues.length ? 'has-issue' : '']
    .filter(Boolean)
    .join(' ')

  if (!definition) {
    return (
      <div className={className} data-status={status}>
        <Handle type="target" position={Position.Left} id="input" className="socket socket-circle" />
        <header className="node-header">
          <span className="node-icon">?</span>
          <div className="node-titles">
            <strong data-testid="node-title">{name}</strong>
            <small>unknown type {data.kind}</small>
          </div>
        </header>
        <Handle type="source" position={Position.Right} id="output" className="socket socket-circle" />
      </div>
    )
  }

  const inputs = inputPorts(definition).filter((p) => !definition.parameters.some((q) => q.id === p.id && q.hybrid))
  const outputs = outputPorts(definition, data.values)
  const rows = Math.max(inputs.length, outputs.length)
  const primary = definition.parameters.filter((p) => primaryIds.has(p.id))
  const secondary = definition.parameters.filter((p) => !primaryIds.has(p.id))
  const showMore = more || secondary.some((p) => issues.some((i) => i.field === p.id))
  const renderParam = (parameter: Parameter) => {
    const isWired = parameter.hybrid && wired.includes(` ${parameter.id} `)
    return (
      <div key={parameter.id} className="param-row">
        {parameter.hybrid && (
          <Handle
            type="target"
            position={Position.Left}
            id={parameter.id}
            {...socketStyle(catalogue, parameter.socket ?? 'any')}
            title={`${parameter.label} (${parameter.socket ?? 'any'} socket)`}
          />
        )}
        <ParamField
          nodeId={id}
          parameter={parameter}
          value={data.values[parameter.id]}
          wired={isWired}
          issues={issues.length ? fieldIssues(issues, parameter.id) : undefined}
          onChange={onChange}
        />
      </div>
    )
  }

  return (
    <div className={className} data-status={status} data-kind={data.kind}>
      <header className="node-header" title={definition.description}>
        <span className="node-icon" aria-hidden="true" title={definition.icon}>
          {initials(definition.name)}
        </span>
        <div className="node-titles">
          <strong data-testid="node-title">{name}</strong>
          <small>{definition.name}</small>
        </div>
        {status && <span className={`status-badge ${status}`}>{status}</span>}
      </header>
      {rows > 0 && (
        <div className="node-ports">
          {Array.from({ length: rows }, (_, i) => (
            <PortRow key={i} catalogue={catalogue} input={inputs[i]} output={outputs[i]} />
          ))}
        </div>
      )}
      {data.kind === 'schedule-trigger' && <NextFire id={id} />}
      {primary.length > 0 && <div className="node-params">{primary.map(renderParam)}</div>}
      {secondary.length > 0 && (
        <div className="node-more">
          <button type="button" className="nodrag section-toggle" aria-expanded={showMore} onClick={() => setMore(!showMore)}>
            {showMore ? '▾' : '▸'} {secondary.length} more parameter{secondary.length === 1 ? '' : 's'}
          </button>
          {showMore && <div className="node-params">{secondary.map(renderParam)}</div>}
        </div>
      )}
      <Settings catalogue={catalogue} id={id} values={data.values} issues={issues} onChange={onChange} />
      {issues.length > 0 && (
        <ul className="node-issues" data-testid="node-issues" role="list" aria-label="Problems">
          {issues.map((issue, i) => (
            <li key={i}>
              {issue.field ? <code>{issue.field}</code> : null} {issue.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

export const NodeCard = memo(NodeCardView)
