// The import graph of src/: no module imports itself through others (a cycle), and the
// shared components (components/) import no feature folder. Type-only imports count too:
// a cycle of types is still two modules that cannot be read apart.

import { describe, expect, it } from 'vitest'

const sources = import.meta.glob(['./**/*.ts', './**/*.tsx', '!./**/*.test.ts', '!./**/*.test.tsx'], {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>

const IMPORT = /(?:^|[\s;])(?:import|export)\s(?:[^'"`;]*?\sfrom\s)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g

/** The relative specifiers a module imports (its `import`, `export ... from` and `import()`). */
export function importsOf(text: string): string[] {
  const found: string[] = []
  for (const match of text.matchAll(IMPORT)) {
    const specifier = match[1] ?? match[2]
    if (specifier.startsWith('.')) found.push(specifier)
  }
  return found
}

function resolve(from: string, specifier: string, files: ReadonlySet<string>): string | null {
  const parts = from.split('/').slice(0, -1)
  for (const part of specifier.split('/')) {
    if (part === '..') parts.pop()
    else if (part !== '.') parts.push(part)
  }
  const base = parts.join('/')
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`]) {
    if (files.has(candidate)) return candidate
  }
  return null
}

/** Module -> the modules of src/ it imports (styles and JSON are leaves, left out). */
export function importGraph(files: Record<string, string>): Map<string, string[]> {
  const names = new Set(Object.keys(files))
  const graph = new Map<string, string[]>()
  for (const [file, text] of Object.entries(files)) {
    const targets = importsOf(text)
      .map((specifier) => resolve(file, specifier, names))
      .filter((target): target is string => target !== null)
    graph.set(file, [...new Set(targets)].sort())
  }
  return graph
}

/** Every import cycle, one per strongly connected component (Tarjan), each as a path. */
export function cyclesOf(graph: Map<string, string[]>): string[][] {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  const visit = (node: string) => {
    index.set(node, counter)
    low.set(node, counter)
    counter += 1
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!))
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      const selfLoop = (graph.get(node) ?? []).includes(node)
      if (component.length > 1 || selfLoop) cycles.push(component.sort())
    }
  }
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node)
  return cycles
}

describe('the import graph of src/', () => {
  const graph = importGraph(sources)

  it('reads every module of the app', () => {
    expect(graph.get('./runs/RunDetail.tsx')).toContain('./components/WaitingCards.tsx')
    expect(graph.size).toBeGreaterThan(40)
  })

  it('has no import cycle', () => {
    expect(cyclesOf(graph)).toEqual([])
  })

  it('keeps the shared components free of feature folders', () => {
    const features = ['./app/', './canvas/', './chat/', './runs/', './settings/']
    const leaks = [...graph.entries()]
      .filter(([file]) => file.startsWith('./components/'))
      .flatMap(([file, targets]) => targets.filter((t) => features.some((f) => t.startsWith(f))).map((t) => `${file} -> ${t}`))
    expect(leaks).toEqual([])
  })

  it('would catch the cycle RunDetail and RunHistory once had', () => {
    const before = importGraph({
      './runs/RunHistory.tsx': "import { RunDetail } from './RunDetail'\nimport './runs.css'",
      './runs/RunDetail.tsx': "import type { Waiting } from '../chat/model'\nimport { formatTime } from './RunHistory'",
      './chat/model.ts': "export type { Waiting } from './waiting'",
      './chat/waiting.ts': 'export interface Waiting { nodeId: string }',
    })
    expect(cyclesOf(before)).toEqual([['./runs/RunDetail.tsx', './runs/RunHistory.tsx']])
  })
})
