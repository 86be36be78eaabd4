// A small catalogue for the flow/ tests: the shapes of /api/nodes, a few node types.

import type { Catalogue, NodeDefinition, Parameter, Port } from '../api/models'
import type { FlowNode } from './types'

const port = (id: string, socket: string, extra: Partial<Port> = {}): Port => ({
  id, socket, label: id, required: false, multiple: false, ...extra,
})
const param = (id: string, type: Parameter['type'], extra: Partial<Parameter> = {}): Parameter => ({
  id, type, label: id, default: null, required: false, hybrid: false, ...extra,
})
const node = (id: string, extra: Partial<NodeDefinition>): NodeDefinition => ({
  id, name: id, category: 'flow', description: '', icon: 'Box', execution_mode: 'flow',
  inputs: [port('input', 'data')], outputs: [port('output', 'data')], main_output: 'output',
  parameters: [], side_effects: 'pure', streaming: false, trigger: false, interactive: false,
  output_shape: null, ...extra,
})

export const catalogue: Catalogue = {
  nodes: [
    node('chat-start', { inputs: [], output_shape: { message: 'string' } }),
    node('prompt-template', { parameters: [param('template', 'text')], output_shape: { text: 'string' } }),
    node('merge', { inputs: [port('input', 'data', { multiple: true })] }),
    node('agent', {
      execution_mode: 'hybrid',
      inputs: [port('input', 'data'), port('tools', 'tools', { multiple: true })],
      outputs: [port('output', 'data'), port('agent', 'agent')],
      parameters: [
        param('instructions', 'text', { hybrid: true, socket: 'string' }),
        param('temperature', 'number', { hybrid: true, socket: 'float' }),
        param('model', 'string', { hybrid: true, socket: 'model' }),
      ],
    }),
    node('toolset', { execution_mode: 'structural', inputs: [], outputs: [port('tools', 'tools')] }),
    node('model-selector', { execution_mode: 'hybrid', inputs: [], outputs: [port('model', 'model')] }),
    node('http-request', {
      outputs: [port('response', 'data'), port('status', 'int'), port('error', 'data')],
      main_output: 'response',
    }),
    node('switch', {
      outputs: [port('case-{index}', 'data', { repeat: 'cases' }), port('default', 'data')],
      parameters: [param('cases', 'json', { default: [] })],
    }),
    node('loop', { parameters: [param('body', 'graph')] }),
    node('schedule-trigger', { category: 'trigger', inputs: [], trigger: true, parameters: [param('every', 'string')] }),
  ],
  common_parameters: [],
  socket_types: [
    { id: 'data', color: '#e5e7eb', shape: 'circle', description: '', structural: false },
    { id: 'agent', color: '#7c3aed', shape: 'circle', description: '', structural: true },
    { id: 'tools', color: '#f59e0b', shape: 'square', description: '', structural: true },
    { id: 'model', color: '#06b6d4', shape: 'circle', description: '', structural: false },
    { id: 'string', color: '#3b82f6', shape: 'circle', description: '', structural: false },
    { id: 'float', color: '#a1a1aa', shape: 'circle', description: '', structural: false },
    { id: 'int', color: '#71717a', shape: 'circle', description: '', structural: false },
  ],
  coercions: [
    { from: 'agent', to: 'tools' },
    { from: 'int', to: 'float' },
    { from: 'int', to: 'string' },
    { from: 'float', to: 'string' },
  ],
  failures: [],
}

export function flowNode(id: string, kind: string, values: Record<string, unknown> = {}): FlowNode {
  return { id, type: 'nodeloom', position: { x: 0, y: 0 }, data: { kind, values } }
}
