// The knowledge API (docs/api.md): collections, search, and uploads ingested as a run.

import { ApiError, api, authHeaders } from '../api/client'

export interface Collection {
  name: string
  model: string
  dimension: number
  chunks: number
  sources: number
}

export interface Hit {
  id: string
  text: string
  score: number
  metadata: Record<string, unknown>
}

export interface SearchResult {
  hits: Hit[]
  context: string
}

export type SearchMode = 'hybrid' | 'vector' | 'keyword'

export const SUPPORTED = ['.txt', '.md', '.markdown', '.html', '.htm', '.pdf', '.docx', '.csv', '.json']

export function isSupported(name: string): boolean {
  const lower = name.toLowerCase()
  return SUPPORTED.some((suffix) => lower.endsWith(suffix))
}

export async function listCollections(): Promise<Collection[]> {
  return (await api<{ collections: Collection[] }>('/api/knowledge/collections')).collections
}

export async function searchCollection(name: string, query: string, mode: SearchMode, topK = 5): Promise<SearchResult> {
  return api<SearchResult>(`/api/knowledge/collections/${encodeURIComponent(name)}/search`, {
    method: 'POST',
    json: { query, mode, top_k: topK },
  })
}

export async function dropCollection(name: string): Promise<void> {
  await api(`/api/knowledge/collections/${encodeURIComponent(name)}`, { method: 'DELETE' })
}

/** Uploads files (reporting the bytes sent); answers the ingest run's id. XMLHttpRequest,
 * because fetch() reports no upload progress. */
export function uploadFiles(name: string, files: File[], onSent: (fraction: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const form = new FormData()
    for (const file of files) form.append('files', file, file.name)
    const request = new XMLHttpRequest()
    request.open('POST', `/api/knowledge/collections/${encodeURIComponent(name)}/files`)
    for (const [key, value] of Object.entries(authHeaders())) request.setRequestHeader(key, value)
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) onSent(event.loaded / event.total)
    }
    request.onload = () => {
      let body: Record<string, unknown> = {}
      try {
        body = request.responseText ? JSON.parse(request.responseText) : {}
      } catch {
        body = { error: { message: request.responseText } }
      }
      if (request.status === 202) resolve(String(body.run_id))
      else {
        if (request.status === 401) window.dispatchEvent(new Event('nodeloom:unauthorized'))
        reject(new ApiError(request.status, (body.error as Record<string, unknown>) ?? { message: request.statusText }))
      }
    }
    request.onerror = () => reject(new Error('the upload failed: the server could not be reached'))
    request.send(form)
  })
}

/** Where a hit comes from, for people: `guide.pdf p.3 › Setup › Power`. */
export function sourceOf(hit: Hit): string {
  const meta = hit.metadata
  let text = String(meta.source ?? hit.id)
  if (meta.page !== undefined && meta.page !== null) text += ` p.${String(meta.page)}`
  const headings = Array.isArray(meta.headings) ? (meta.headings as unknown[]).map(String) : []
  if (headings.length) text += ` › ${headings.join(' › ')}`
  return text
}
