import { describe, expect, it } from 'vitest'
import type { NodeDefinition } from '../api/models'
import { applyCompletion, completionsAt, outputFields, type ExpressionContext } from './expressions'

const context: ExpressionContext = {
  upstream: [
    { name: 'Start', fields: ['message'], direct: true },
    { name: 'HTTP Request', fields: ['status', 'headers', 'body'], direct: false },
  ],
  variables: ['greeting'],
  credentials: [],
  inLoop: false,
}

describe('completionsAt', () => {
  it('offers nothing outside {{ }}', () => {
    expect(completionsAt('hello $js', 9, context)).toBeNull()
    expect(completionsAt('{{ $json }} $js', 15, context)).toBeNull()
  })

  it('offers everything right after {{', () => {
    const result = completionsAt('Hi {{ ', 6, context)!
    const labels = result.options.map((o) => o.label)
    expect(labels).toContain('$json')
    expect(labels).toContain('$vars.')
    expect(labels).toContain('$credentials.')
    expect(labels).toContain("$('HTTP Request').item.json.status")
    expect(result.from).toBe(6)
  })

  it('filters by the token typed and replaces it', () => {
    const text = 'Hi {{ $js'
    const result = completionsAt(text, text.length, context)!
    expect(result.options.map((o) => o.label)).toEqual(['$json', '$json.message'])
    expect(result.from).toBe(6)
    const applied = applyCompletion(text, result, result.options[1])
    expect(applied.text).toBe('Hi {{ $json.message }}')
  })

  it('completes upstream node fields by name', () => {
    const text = "{{ $('HTTP Request').item.json.st"
    const result = completionsAt(text, text.length, context)!
    expect(result.options.map((o) => o.label)).toEqual(["$('HTTP Request').item.json.status"])
  })

  it('completes variables', () => {
    const text = '{{ $vars.g }}'
    const result = completionsAt(text, 10, context)!
    expect(result.options.map((o) => o.label)).toEqual(['$vars.greeting'])
    expect(applyCompletion(text, result, result.options[0]).text).toBe('{{ $vars.greeting }}')
  })

  it('offers $loop only inside a loop body', () => {
    expect(completionsAt('{{ $lo', 6, context)).toBeNull()
    expect(completionsAt('{{ $lo', 6, { ...context, inLoop: true })!.options[0].label).toBe('$loop.index')
  })
})

describe('outputFields', () => {
  const base = { outputs: [], main_output: 'output', output_shape: null } as unknown as NodeDefinition
  it('reads output_shape keys', () => {
    expect(outputFields({ ...base, output_shape: { text: 'string', usage: 'object' } })).toEqual(['text', 'usage'])
  })
  it("reads the main port's description", () => {
    const definition = {
      ...base,
      main_output: 'decision',
      outputs: [{ id: 'decision', socket: 'data', label: '', required: false, multiple: false,
        description: '{"decision": "approve"|"reject", "note"}: always fires' }],
    } as NodeDefinition
    expect(outputFields(definition)).toEqual(['decision', 'note'])
  })
})
