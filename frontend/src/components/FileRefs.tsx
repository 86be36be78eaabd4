// The files a value references (uploads, downloads, files under the root), each as
// name · mime · size, with a download link for the run store's blobs. The link fetches
// with the bearer token (a plain <a href> could not send it) and saves the answer.

import { useState } from 'react'
import { authHeaders } from '../api/client'
import { downloadUrl, findFileRefs, formatSize, type FileRef } from './fileRefs'
import './components.css'

async function save(url: string, name: string): Promise<void> {
  const response = await fetch(url, { headers: authHeaders() })
  if (!response.ok) throw new Error(`download failed: HTTP ${response.status}`)
  const objectUrl = URL.createObjectURL(await response.blob())
  const link = document.createElement('a')
  link.href = objectUrl
  link.download = name
  link.click()
  setTimeout(() => URL.revokeObjectURL(objectUrl), 1000)
}

function FileRow({ runId, file }: { runId: string; file: FileRef }) {
  const [error, setError] = useState<string | null>(null)
  const url = downloadUrl(runId, file)
  return (
    <li className="file-ref" data-testid="file-ref">
      <span className="file-ref-name">{file.name}</span>
      <span className="file-ref-meta">
        {' · '}
        {file.mime}
        {' · '}
        {formatSize(file.size)}
      </span>
      {url !== null ? (
        <a
          className="file-ref-download"
          href={url}
          download={file.name}
          onClick={(event) => {
            event.preventDefault()
            setError(null)
            save(url, file.name).catch((reason: unknown) => setError(String(reason)))
          }}
        >
          Download
        </a>
      ) : (
        <span className="file-ref-path" title="a file under the files root">
          {file.ref.slice('file:'.length)}
        </span>
      )}
      {error && <span className="file-ref-error">{error}</span>}
    </li>
  )
}

export function FileRefs({ value, runId, testId }: { value: unknown; runId: string; testId?: string }) {
  const files = findFileRefs(value)
  if (files.length === 0) return null
  return (
    <ul className="file-refs" data-testid={testId} aria-label="files">
      {files.map((file) => (
        <FileRow key={`${file.ref} ${file.name}`} runId={runId} file={file} />
      ))}
    </ul>
  )
}
