import { describe, expect, it } from 'vitest'
import type { NodeDefinition } from '../api/models'
import { outputPorts } from './ports'

const approval = {
  id: 'approval',
  name: 'Approval',
  category: 'flow',
  description: '',
  icon: 'ShieldCheck',
  execution_mode: 'flow',
  inputs: [],
  outputs: [
    { id: 'decision', socket: 'data', label: 'decision', required: true, multiple: false },
    {
      id: 'timeout',
      socket: 'data',
      label: 'Timeout',
      required: true,
      multiple: false,
      when: { parameter: 'on_timeout', equals: 'port' },
    },
  ],
  main_output: 'decision',
  parameters: [{ id: 'on_timeout', type: 'enum', label: 'On timeout', default: 'fail', required: false, hybrid: false }],
  side_effects: 'pure',
  streaming: false,
  trigger: false,
  interactive: true,
  output_shape: null,
} as unknown as NodeDefinition

describe('an output port with `when`', () => {
  it('is present only while its parameter has the value, the default counting', () => {
    expect(outputPorts(approval, {}).map((p) => p.id)).toEqual(['decision'])
    expect(outputPorts(approval, { on_timeout: 'answer' }).map((p) => p.id)).toEqual(['decision'])
    expect(outputPorts(approval, { on_timeout: 'port' }).map((p) => p.id)).toEqual(['decision', 'timeout'])
  })
})
