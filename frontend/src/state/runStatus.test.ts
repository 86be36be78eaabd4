import { beforeEach, describe, expect, it } from 'vitest'
import type { RunEvent } from '../api/models'
import { useRunStatus } from './runStatus'

function event(event_type: string, node_id: string | null = null): RunEvent {
  return { seq: 1, run_id: 'r1', event_type, node_id, node_name: node_id, node_type: null, timestamp: 0, data: {} }
}

describe('useRunStatus', () => {
  beforeEach(() => useRunStatus.getState().reset('r1'))

  it('marks each node from its events', () => {
    const { apply } = useRunStatus.getState()
    apply(event('started', 'a'))
    apply(event('completed', 'a'))
    apply(event('started', 'b'))
    apply(event('error', 'b'))
    apply(event('skipped', 'c'))
    apply(event('waiting', 'd'))
    expect(useRunStatus.getState().nodes).toEqual({ a: 'done', b: 'failed', c: 'skipped', d: 'waiting' })
  })

  it('ignores run-level and token events for nodes', () => {
    const { apply } = useRunStatus.getState()
    apply(event('run_started'))
    apply(event('progress', 'a'))
    expect(useRunStatus.getState().nodes).toEqual({})
  })

  it('marks nodes still running or waiting as skipped when the run ends', () => {
    const { apply } = useRunStatus.getState()
    apply(event('started', 'a'))
    apply(event('waiting', 'b'))
    apply(event('completed', 'c'))
    apply(event('run_cancelled'))
    expect(useRunStatus.getState().nodes).toEqual({ a: 'skipped', b: 'skipped', c: 'done' })
  })

  it('starts over for a new run', () => {
    useRunStatus.getState().apply(event('completed', 'a'))
    useRunStatus.getState().reset('r2')
    expect(useRunStatus.getState()).toMatchObject({ runId: 'r2', nodes: {} })
  })
})
