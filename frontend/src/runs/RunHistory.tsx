export function RunHistory({ runId }: { runId: string | null }) {
  return <main className="runs">Runs {runId}</main>
}
