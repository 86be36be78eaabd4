import { describe, expect, it } from 'vitest'
import { canConnectSockets, checkConnection } from './connections'
import { catalogue, flowNode } from './testCatalogue'
import type { FlowEdge } from './types'

const nodes = [
  flowNode('start', 'chat-start'),
  flowNode('tpl', 'prompt-template'),
  flowNode('tpl2', 'prompt-template'),
  flowNode('merge', 'merge'),
  flowNode('agent', 'agent'),
  flowNode('sub', 'agent'),
  flowNode('tools', 'toolset'),
  flowNode('tools2', 'toolset'),
  flowNode('model', 'model-selector'),
  flowNode('http', 'http-request'),
  flowNode('switch', 'switch', { cases: ['a', 'b'] }),
  flowNode('each', 'prompt-template', { activation: 'each' }),
]
const edge = (id: string, source: string, target: string, sourceHandle = 'output', targetHandle = 'input'): FlowEdge => ({
  id, source, target, sourceHandle, targetHandle,
})
const check = (edges: FlowEdge[], source: string, target: string, sourceHandle = 'output', targetHandle = 'input') =>
  checkConnection(catalogue, nodes, edges, { source, target, sourceHandle, targetHandle })

describe('canConnectSockets mirrors sockets.can_connect', () => {
  it.each([
    ['data', 'data', true],
    ['data', 'string', true],
    ['string', 'data', true],
    ['int', 'float', true],
    ['float', 'int', false],
    ['agent', 'tools', true],
    ['tools', 'agent', false],
    ['data', 'tools', false],
    ['tools', 'data', false],
    ['model', 'string', false],
  ])('%s -> %s is %s', (source, target, expected) => {
    expect(canConnectSockets(catalogue, source, target)).toBe(expected)
  })
})

describe('checkConnection', () => {
  it('accepts a spine wire', () => {
    expect(check([], 'start', 'tpl')).toEqual({ ok: true })
  })

  it('refuses a self loop unless the node runs on each value', () => {
    const result = check([], 'tpl', 'tpl')
    expect(result.ok).toBe(false)
    expect(!result.ok && result.reason).toMatch(/itself/)
    expect(check([], 'each', 'each')).toEqual({ ok: true })
  })

  it('refuses a second edge into a single port', () => {
    const result = check([edge('e1', 'start', 'tpl')], 'tpl2', 'tpl')
    expect(result.ok).toBe(false)
    expect(!result.ok && result.reason).toMatch(/already has an incoming edge \('e1'\).*Merge/)
  })

  it('lets a multiple port take many edges', () => {
    expect(check([edge('e1', 'start', 'merge')], 'tpl', 'merge')).toEqual({ ok: true })
    const tools = [edge('e1', 'tools', 'agent', 'tools', 'tools')]
    expect(check(tools, 'tools2', 'agent', 'tools', 'tools')).toEqual({ ok: true })
  })

  it('refuses the same wire twice', () => {
    const result = check([edge('e1', 'start', 'merge')], 'start', 'merge')
    expect(!result.ok && result.reason).toMatch(/already connected/)
  })

  it('keeps the structural sockets to structural ones', () => {
    const result = check([], 'tools', 'tpl', 'tools', 'input')
    expect(result.ok).toBe(false)
    expect(!result.ok && result.reason).toMatch(/'tools' socket cannot connect to a 'data' socket/)
    expect(check([], 'start', 'agent', 'output', 'tools').ok).toBe(false)
  })

  it('coerces agent into tools (a sub-agent)', () => {
    expect(check([], 'sub', 'agent', 'agent', 'tools')).toEqual({ ok: true })
  })

  it('wires typed sockets into hybrid parameters with coercion', () => {
    expect(check([], 'model', 'agent', 'model', 'model')).toEqual({ ok: true })
    expect(check([], 'http', 'agent', 'status', 'temperature')).toEqual({ ok: true }) // int -> float
    expect(check([], 'http', 'agent', 'status', 'instructions')).toEqual({ ok: true }) // int -> string
    expect(check([], 'start', 'agent', 'output', 'instructions')).toEqual({ ok: true }) // data -> string
    const refused = check([], 'model', 'agent', 'model', 'instructions')
    expect(!refused.ok && refused.reason).toMatch(/'model' socket cannot connect to a 'string' socket; 'model' connects to: model, any/)
  })

  it('knows repeated outputs and unknown handles', () => {
    expect(check([], 'switch', 'tpl', 'case-1', 'input')).toEqual({ ok: true })
    const result = check([], 'switch', 'tpl', 'case-2', 'input')
    expect(!result.ok && result.reason).toMatch(/no output port 'case-2'.*case-0, case-1, default/)
    const target = check([], 'start', 'tpl', 'output', 'nope')
    expect(!target.ok && target.reason).toMatch(/no input port 'nope'/)
  })

  it('has the error port only when on_error is error_output', () => {
    const withError = [...nodes, flowNode('x', 'prompt-template', { on_error: 'error_output' })]
    expect(checkConnection(catalogue, withError, [], { source: 'x', sourceHandle: 'error', target: 'tpl', targetHandle: 'input' })).toEqual({ ok: true })
    expect(check([], 'tpl2', 'tpl', 'error', 'input').ok).toBe(false)
  })

  it('keeps tools off the spine (structural_on_spine)', () => {
    const toolEdge = [edge('t1', 'sub', 'agent', 'agent', 'tools')]
    const intoTool = check(toolEdge, 'start', 'sub')
    expect(!intoTool.ok && intoTool.reason).toMatch(/cannot also sit on the data spine/)
    const spineFirst = check([edge('s1', 'start', 'sub')], 'sub', 'agent', 'agent', 'tools')
    expect(!spineFirst.ok && spineFirst.reason).toMatch(/is on the data spine \(edge 's1'\)/)
    expect(check([], 'tools', 'tpl', 'tools', 'input').ok).toBe(false)
  })

  it('gives a sub-agent one parent (multiple_parents)', () => {
    const extra = [...nodes, flowNode('agent2', 'agent')]
    const result = checkConnection(catalogue, extra, [edge('t1', 'sub', 'agent', 'agent', 'tools')], {
      source: 'sub', sourceHandle: 'agent', target: 'agent2', targetHandle: 'tools',
    })
    expect(!result.ok && result.reason).toMatch(/one parent/)
  })

  it('feeds a sub-agent side socket only from nodes built before the flow (structural_wire)', () => {
    const toolEdge = [edge('t1', 'sub', 'agent', 'agent', 'tools')]
    const fromFlow = check(toolEdge, 'http', 'sub', 'status', 'temperature')
    expect(!fromFlow.ok && fromFlow.reason).toMatch(/compiled before the flow runs/)
    expect(check(toolEdge, 'model', 'sub', 'model', 'model')).toEqual({ ok: true })
  })
})
