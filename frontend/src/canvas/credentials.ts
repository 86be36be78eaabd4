// The stored credentials' names (GET /api/credentials: names and times, never values),
// asked once per page and shared by the expression completions and the credential
// picker; `refreshCredentials` asks again (after one is added in Settings).

import { useEffect, useState } from 'react'
import { api } from '../api/client'

let names: string[] | null = null
let asking: Promise<string[]> | null = null
const listeners = new Set<(names: string[]) => void>()

export function refreshCredentials(): Promise<string[]> {
  asking = api<{ credentials: { name: string }[] }>('/api/credentials')
    .then((answer) => answer.credentials.map((c) => c.name))
    .catch(() => [] as string[])
    .then((found) => {
      names = found
      listeners.forEach((listener) => listener(found))
      return found
    })
  return asking
}

/** The names known now (empty until the first answer); asks the server the first time. */
export function knownCredentials(): string[] {
  if (asking === null) void refreshCredentials()
  return names ?? []
}

export function useCredentialNames(): string[] | null {
  const [current, setCurrent] = useState<string[] | null>(names)
  useEffect(() => {
    listeners.add(setCurrent)
    if (asking === null) void refreshCredentials()
    return () => {
      listeners.delete(setCurrent)
    }
  }, [])
  return current
}

const REFERENCE = /^\{\{\s*\$credentials\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/

/** The credential a parameter's value names (`{{ $credentials.NAME }}` alone), else null. */
export function credentialOf(value: unknown): string | null {
  return typeof value === 'string' ? (REFERENCE.exec(value.trim())?.[1] ?? null) : null
}

export function credentialReference(name: string): string {
  return `{{ $credentials.${name} }}`
}

/** For tests: forget what was asked. */
export function resetCredentials(): void {
  names = null
  asking = null
}
