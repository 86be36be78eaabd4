// A node's ports as the engine sees them (mirrors `output_ports` and validation's inputs in
// src/nodeloom): repeated outputs expanded from their parameter, outputs whose `when` does
// not hold left out, the `error` port when
// on_error is error_output, and each hybrid parameter as an input port (socket = its type).

import type { Catalogue, NodeDefinition, Port } from '../api/models'

export const ERROR_PORT = 'error'

const definitionCache = new WeakMap<Catalogue, Map<string, NodeDefinition>>()

export function definitionFor(catalogue: Catalogue, type: string): NodeDefinition | undefined {
  let byId = definitionCache.get(catalogue)
  if (!byId) {
    byId = new Map(catalogue.nodes.map((node) => [node.id, node]))
    definitionCache.set(catalogue, byId)
  }
  return byId.get(type)
}

function fill(template: string, index: number, name: unknown): string {
  return template.replaceAll('{index}', String(index)).replaceAll('{name}', String(name))
}

export function outputPorts(definition: NodeDefinition, values: Record<string, unknown>): Port[] {
  const ports: Port[] = []
  for (const port of definition.outputs) {
    const when = port.when
    if (when) {
      const fallback = definition.parameters.find((p) => p.id === when.parameter)?.default
      const value = values[when.parameter] ?? fallback
      if (value !== when.equals) continue
    }
    // `repeat` is the name of the parameter listing the copies.
    const repeat = port.repeat
    if (typeof repeat !== 'string' || !repeat) {
      ports.push(port)
      continue
    }
    let items = values[repeat]
    if (items === undefined || items === null) {
      items = definition.parameters.find((p) => p.id === repeat)?.default
    }
    if (!Array.isArray(items)) continue
    items.forEach((item, index) => {
      const name =
        item && typeof item === 'object' && !Array.isArray(item)
          ? (item as Record<string, unknown>).name
          : item
      ports.push({
        ...port,
        repeat: undefined,
        id: fill(port.id, index, name),
        label: fill(port.label || port.id, index, name),
      })
    })
  }
  if (values.on_error === 'error_output' && !ports.some((p) => p.id === ERROR_PORT)) {
    ports.push({ id: ERROR_PORT, socket: 'data', label: 'Error', required: false, multiple: false })
  }
  return ports
}

/** Input ports, hybrid parameters included (their handle id is the parameter id). */
export function inputPorts(definition: NodeDefinition): Port[] {
  const ports = [...definition.inputs]
  for (const parameter of definition.parameters) {
    if (parameter.hybrid) {
      ports.push({
        id: parameter.id,
        socket: parameter.socket ?? 'any',
        label: parameter.label,
        required: false,
        multiple: false,
      })
    }
  }
  return ports
}

/** The port whose output is `$('Node').item.json`. */
export function mainOutput(definition: NodeDefinition): string {
  return definition.main_output || definition.outputs[0]?.id || 'output'
}
