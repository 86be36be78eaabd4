// The page's place, kept in the URL hash so reloads and the back button work:
// #/ (the saved flows), #/flows (a new flow), #/flows/<id>, #/flows/<id>/chat (open it
// with the chat ready), #/runs, #/runs/<id>, #/knowledge, #/settings.

import { useEffect, useState } from 'react'

export type Route =
  | { page: 'home' }
  | { page: 'editor'; flowId: string | null; chat?: boolean }
  | { page: 'runs'; runId: string | null }
  | { page: 'knowledge' }
  | { page: 'operations' }
  | { page: 'settings' }

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent)
  if (parts[0] === 'runs') return { page: 'runs', runId: parts[1] ?? null }
  if (parts[0] === 'settings') return { page: 'settings' }
  if (parts[0] === 'knowledge') return { page: 'knowledge' }
  if (parts[0] === 'operations') return { page: 'operations' }
  if (parts[0] === 'flows') {
    return parts[2] === 'chat' && parts[1]
      ? { page: 'editor', flowId: parts[1], chat: true }
      : { page: 'editor', flowId: parts[1] ?? null }
  }
  return { page: 'home' }
}

export function hrefOf(route: Route): string {
  switch (route.page) {
    case 'runs':
      return route.runId ? `#/runs/${encodeURIComponent(route.runId)}` : '#/runs'
    case 'settings':
      return '#/settings'
    case 'knowledge':
      return '#/knowledge'
    case 'operations':
      return '#/operations'
    case 'home':
      return '#/'
    case 'editor':
      if (!route.flowId) return '#/flows'
      return `#/flows/${encodeURIComponent(route.flowId)}` + (route.chat ? '/chat' : '')
  }
}

export function navigate(route: Route): void {
  window.location.hash = hrefOf(route)
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash))
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(window.location.hash))
    window.addEventListener('hashchange', onChange)
    return () => window.removeEventListener('hashchange', onChange)
  }, [])
  return route
}
