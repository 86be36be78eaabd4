import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { FileRefs } from './FileRefs'
import { findFileRefs, formatSize } from './fileRefs'

const SHA = 'a'.repeat(64)
const UPLOAD = { $ref: `blob:${SHA}`, mime: 'application/pdf', size: 48213, name: 'q3 report.pdf', sig: 'f'.repeat(32) }
const ON_DISK = { $ref: 'file:reports/q3.csv', mime: 'text/csv', size: 12, name: 'q3.csv' }
// A large JSON value the store moved to a blob: the value itself, not a file.
const LARGE_VALUE = { $ref: `blob:${'b'.repeat(64)}`, mime: 'application/json', size: 900000 }

describe('findFileRefs', () => {
  it('finds blob and file references anywhere in a value, once each, and skips large-value references', () => {
    const value = { output: { body: { file: UPLOAD, again: [UPLOAD], kept: ON_DISK, big: LARGE_VALUE } } }
    expect(findFileRefs(value).map((ref) => [ref.name, ref.digest])).toEqual([
      ['q3 report.pdf', SHA],
      ['q3.csv', null],
    ])
  })

  it('takes a look-alike without a mime type for plain data', () => {
    expect(findFileRefs({ $ref: `blob:${SHA}`, name: 'x' })).toEqual([])
  })

  it('writes sizes the way people read them', () => {
    expect([formatSize(12), formatSize(48213), formatSize(500 * 1024 * 1024)]).toEqual(['12 B', '47 KB', '500 MB'])
  })
})

describe('FileRefs', () => {
  const fetched: { url: string; headers: HeadersInit | undefined }[] = []
  beforeEach(() => {
    fetched.length = 0
    localStorage.setItem('nodeloom.token', 'tok')
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string, init: RequestInit = {}) => {
        fetched.push({ url, headers: init.headers })
        return new Response(new Blob(['%PDF']), { status: 200 })
      }),
    )
    vi.stubGlobal('URL', Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:local'), revokeObjectURL: vi.fn() }))
  })
  afterEach(() => {
    cleanup()
    vi.unstubAllGlobals()
    localStorage.clear()
  })

  it('shows each file as name, type and size with a download of the run’s blob, never the bytes', async () => {
    render(<FileRefs value={{ body: { file: UPLOAD, kept: ON_DISK } }} runId="r1" testId="files" />)
    const [upload, onDisk] = within(screen.getByTestId('files')).getAllByTestId('file-ref')
    expect(upload.textContent).toBe('q3 report.pdf · application/pdf · 47 KBDownload')
    expect(onDisk.textContent).toBe('q3.csv · text/csv · 12 Breports/q3.csv')
    const link = within(upload).getByRole('link', { name: 'Download' })
    expect(link.getAttribute('href')).toBe(`/api/runs/r1/files/${SHA}?name=q3%20report.pdf`)
    expect(within(onDisk).queryByRole('link')).toBeNull()
    fireEvent.click(link)
    await waitFor(() => expect(fetched).toHaveLength(1))
    expect(fetched[0]).toEqual({ url: `/api/runs/r1/files/${SHA}?name=q3%20report.pdf`, headers: { Authorization: 'Bearer tok' } })
  })

  it('renders nothing for a value without files', () => {
    const { container } = render(<FileRefs value={{ text: 'hello' }} runId="r1" />)
    expect(container.innerHTML).toBe('')
  })
})
