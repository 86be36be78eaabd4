export function Editor({ flowId }: { flowId: string | null }) {
  return <main className="editor">Editor for {flowId ?? 'a new flow'}</main>
}
