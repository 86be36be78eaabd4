// The shell: a top bar with the pages, and the page the URL names.

import { useEffect, useState } from 'react'
import { Editor } from '../canvas/Editor'
import { ChatPanel } from '../chat/ChatPanel'
import { Home } from '../home/Home'
import { KnowledgePage } from '../knowledge/KnowledgePage'
import { OperationsPage } from '../operations/OperationsPage'
import { RunHistory } from '../runs/RunHistory'
import { Settings } from '../settings/Settings'
import { useCatalogue } from '../state/catalogue'
import { hrefOf, useRoute } from './route'
import { Help, isHelpKey } from './Help'
import { TokenDialog } from './TokenDialog'

export function App() {
  const route = useRoute()
  const { catalogue, error, load } = useCatalogue()
  const [askToken, setAskToken] = useState(false)
  const [help, setHelp] = useState(false)

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (isHelpKey(event)) {
        event.preventDefault()
        setHelp(true)
      }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [])

  useEffect(() => {
    const onUnauthorized = () => setAskToken(true)
    window.addEventListener('nodeloom:unauthorized', onUnauthorized)
    void load()
    return () => window.removeEventListener('nodeloom:unauthorized', onUnauthorized)
  }, [load])

  return (
    <div className="app">
      <header className="topbar">
        <a className="brand" href={hrefOf({ page: 'home' })}>
          nodeloom
        </a>
        <nav aria-label="Pages">
          <a href={hrefOf({ page: 'home' })} aria-current={route.page === 'home' ? 'page' : undefined}>
            Flows
          </a>
          <a href={hrefOf({ page: 'editor', flowId: null })} aria-current={route.page === 'editor' ? 'page' : undefined}>
            Editor
          </a>
          <a href={hrefOf({ page: 'runs', runId: null })} aria-current={route.page === 'runs' ? 'page' : undefined}>
            Runs
          </a>
          <a href={hrefOf({ page: 'knowledge' })} aria-current={route.page === 'knowledge' ? 'page' : undefined}>
            Knowledge
          </a>
          <a href={hrefOf({ page: 'operations' })} aria-current={route.page === 'operations' ? 'page' : undefined}>
            Operations
          </a>
          <a href={hrefOf({ page: 'settings' })} aria-current={route.page === 'settings' ? 'page' : undefined}>
            Settings
          </a>
        </nav>
        <button type="button" className="help-button" aria-label="Help: keyboard shortcuts and docs" onClick={() => setHelp(true)}>
          ?
        </button>
      </header>
      {error && !catalogue && !askToken && (
        <p className="banner error" role="alert">
          Could not load the node catalogue: {error}
        </p>
      )}
      {catalogue && route.page === 'home' && <Home />}
      {catalogue && route.page === 'editor' && (
        <div className="editor-layout">
          <Editor flowId={route.flowId} />
          <ChatPanel focus={route.chat === true} />
        </div>
      )}
      {catalogue && route.page === 'runs' && <RunHistory runId={route.runId} />}
      {catalogue && route.page === 'knowledge' && <KnowledgePage />}
      {catalogue && route.page === 'operations' && <OperationsPage />}
      {catalogue && route.page === 'settings' && <Settings />}
      {help && <Help onClose={() => setHelp(false)} />}
      {askToken && (
        <TokenDialog
          onDone={() => {
            setAskToken(false)
            void load()
          }}
        />
      )}
    </div>
  )
}
