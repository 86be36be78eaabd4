export function ChatPanel() {
  return <aside className="chat-panel">Chat</aside>
}
