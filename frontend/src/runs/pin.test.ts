import { describe, expect, it } from 'vitest'
import { pinnedOf, withPinned } from './pin'
import { runQuery } from './RunHistory'

const doc = { nodes: [{ id: 'a', type: 'x', data: { name: 'A' } }, { id: 'b', type: 'y', data: {} }], edges: [] }

describe('pinned outputs', () => {
  it('sets and removes data.pinned on one node only', () => {
    const pinned = withPinned(doc, 'a', { output: { text: 'hi' } })
    expect(pinnedOf(pinned, 'a')).toEqual({ output: { text: 'hi' } })
    expect(pinned.nodes[0].data.name).toBe('A')
    expect(pinnedOf(pinned, 'b')).toBeUndefined()
    expect(doc.nodes[0].data).toEqual({ name: 'A' })
    expect(pinnedOf(withPinned(pinned, 'a', null), 'a')).toBeUndefined()
  })

  it('refuses a node the flow no longer has', () => {
    expect(() => withPinned(doc, 'zz', {})).toThrow(/no node 'zz'/)
  })
})

describe('run list query', () => {
  it('repeats status and leaves out empty filters', () => {
    expect(runQuery({ statuses: ['failed', 'paused'], flowId: '', chatId: ' c1 ', offset: 25, limit: 25 })).toBe(
      '/api/runs?status=failed&status=paused&chat_id=c1&limit=25&offset=25',
    )
  })
})
