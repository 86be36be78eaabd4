// File and blob references inside a value (docs/files.md): what the run view shows as
// name · mime · size with a download link, never the bytes. Plain TS, no React.

export interface FileRef {
  /** `blob:<sha256>` (the run store's; downloadable) or `file:<path>` (the files root's). */
  ref: string
  name: string
  mime: string
  size: number
  /** The sha256 of a `blob:` reference, else null. */
  digest: string | null
}

const DIGEST = /^blob:([0-9a-f]{64})$/
const MAX_REFS = 50

function asRef(value: Record<string, unknown>): FileRef | null {
  const ref = value.$ref
  if (typeof ref !== 'string' || typeof value.mime !== 'string') return null
  const digest = DIGEST.exec(ref)?.[1] ?? null
  // A `blob:` reference of the store's large JSON values has no name: it is the value itself.
  if (digest !== null && typeof value.sig !== 'string') return null
  if (digest === null && !ref.startsWith('file:')) return null
  const name = typeof value.name === 'string' ? value.name : ref.split('/').pop() ?? ref
  const size = typeof value.size === 'number' ? value.size : 0
  return { ref, name, mime: value.mime, size, digest }
}

/** The references in `value`, depth first, at most 50, each once. */
export function findFileRefs(value: unknown): FileRef[] {
  const found: FileRef[] = []
  const seen = new Set<string>()
  const stack: unknown[] = [value]
  while (stack.length > 0 && found.length < MAX_REFS) {
    const item = stack.pop()
    if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push(item[i])
    } else if (item !== null && typeof item === 'object') {
      const record = item as Record<string, unknown>
      const ref = asRef(record)
      if (ref !== null) {
        const key = `${ref.ref} ${ref.name}`
        if (!seen.has(key)) {
          seen.add(key)
          found.push(ref)
        }
      } else {
        const values = Object.values(record)
        for (let i = values.length - 1; i >= 0; i--) stack.push(values[i])
      }
    }
  }
  return found
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  const units = ['KB', 'MB', 'GB', 'TB']
  let size = bytes / 1024
  let unit = 0
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024
    unit += 1
  }
  return `${size < 10 ? size.toFixed(1) : Math.round(size)} ${units[unit]}`
}

/** The download address of a blob reference of a run (GET /api/runs/{id}/files/{sha256}). */
export function downloadUrl(runId: string, ref: FileRef): string | null {
  if (ref.digest === null) return null
  const name = encodeURIComponent(ref.name)
  return `/api/runs/${encodeURIComponent(runId)}/files/${ref.digest}?name=${name}`
}
