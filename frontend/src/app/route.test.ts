import { describe, expect, it } from 'vitest'
import { hrefOf, parseRoute } from './route'
import { isHelpKey, SHORTCUTS } from './Help'

describe('routes', () => {
  it('opens on the saved flows, and keeps #/flows for a new flow', () => {
    expect(parseRoute('')).toEqual({ page: 'home' })
    expect(parseRoute('#/')).toEqual({ page: 'home' })
    expect(parseRoute('#/flows')).toEqual({ page: 'editor', flowId: null })
    expect(parseRoute('#/flows/abc')).toEqual({ page: 'editor', flowId: 'abc' })
    expect(parseRoute('#/flows/abc/chat')).toEqual({ page: 'editor', flowId: 'abc', chat: true })
  })

  it('writes each route back as the hash it was read from', () => {
    for (const hash of ['#/', '#/flows', '#/flows/abc', '#/flows/abc/chat', '#/runs', '#/knowledge', '#/operations', '#/settings']) {
      expect(hrefOf(parseRoute(hash))).toBe(hash)
    }
  })
})

describe('the ? help', () => {
  it('opens on ? outside text fields only', () => {
    const key = (target: HTMLElement) => {
      const event = new KeyboardEvent('keydown', { key: '?' })
      Object.defineProperty(event, 'target', { value: target })
      return isHelpKey(event)
    }
    expect(key(document.body)).toBe(true)
    expect(key(document.createElement('textarea'))).toBe(false)
    expect(key(document.createElement('input'))).toBe(false)
  })

  it('lists the editor shortcuts the docs list', () => {
    expect(SHORTCUTS.map(([keys]) => keys)).toEqual(expect.arrayContaining(['Ctrl+S', 'Ctrl+A', 'Delete / Backspace', '?']))
  })
})
