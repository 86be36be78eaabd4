export function Settings() {
  return <main className="settings">Settings</main>
}
