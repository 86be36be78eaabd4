// The conversation with the flow open in the editor. A store outside the panel, so the
// conversation (and a run it follows) survives a visit to the run history and back.
// Sending posts POST /api/flows/{id}/chat with `stream: true` (and the user tools picked
// for the turn) and reads its frames (ChatTurn, the run's events, each node's FlowStep
// block, ChatReply); answering a waiting node resumes the run, follows GET
// /api/runs/{id}/events from the last event seen, then takes the run's flow_step blocks
// from GET /api/runs/{id}/steps. The live run's node states go
// to useRunStatus so the canvas marks its nodes.

import { create } from 'zustand'
import { api, ApiError } from '../api/client'
import { eventOf, followRunEvents, streamSse } from '../api/stream'
import type { FlowStep, RunEvent, RunSteps } from '../api/models'
import { useCurrentFlow } from '../state/currentFlow'
import { useRunStatus } from '../state/runStatus'
import { answerOfRun } from './answer'
import { applyEvent, applyFlowStep, applyFlowSteps, applyReply, newTurn, type ChatReply, type Turn } from './model'

interface ChatSession {
  /** The flow this conversation is with (null before the first message). */
  flowId: string | null
  chatId: string | null
  turns: Turn[]
  busy: boolean
  notice: string | null
  /** The user tools picked for the next turns (names from GET /api/tools). */
  tools: string[]
  setTools: (tools: string[]) => void
  /** Sends a message; resolves false when it was not sent (nothing to send, busy, not saved). */
  send: (message: string) => Promise<boolean>
  /** Answers a waiting node of a turn's run and follows the run; throws the server's refusal. */
  answer: (turnKey: string, nodeId: string, value: unknown) => Promise<void>
  stop: (turnKey: string) => Promise<void>
  startOver: () => void
  /** The editor opened `flowId`: a conversation with another flow starts over. */
  openFlow: (flowId: string | null) => void
}

let controller: AbortController | null = null
let counter = 0

export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return error.message
  if (error instanceof Error) return error.message
  return String(error)
}

export const useChat = create<ChatSession>((set, get) => {
  const turnOf = (key: string) => get().turns.find((t) => t.key === key)
  const commit = (turn: Turn) => set({ turns: get().turns.map((t) => (t.key === turn.key ? turn : t)) })

  /** Applies a run event to the turn and to the canvas's run status. */
  const onEvent = (key: string, event: RunEvent) => {
    const turn = turnOf(key)
    if (!turn) return
    const next = applyEvent(turn, event)
    const status = useRunStatus.getState()
    if (status.runId === event.run_id) status.apply(event)
    commit(next)
  }

  /** After following a run's events (no FlowStep frames there), its flow_step blocks. */
  const finishSteps = async (key: string) => {
    const turn = turnOf(key)
    if (!turn?.runId) return
    try {
      const served = await api<RunSteps>(`/api/runs/${encodeURIComponent(turn.runId)}/steps`)
      const now = turnOf(key)
      if (now && served.show_flow_steps) commit(applyFlowSteps(now, served.steps))
    } catch {
      // the cards stay as they were
    }
  }

  /** After a resumed run ended (no ChatReply then), the answer it produced. */
  const finishAnswer = async (key: string) => {
    const turn = turnOf(key)
    if (!turn?.runId || turn.status !== 'completed' || turn.answer !== null) return
    try {
      const answer = await answerOfRun(turn.runId)
      const now = turnOf(key)
      if (now && answer !== null) commit({ ...now, answer })
    } catch {
      // the streamed tokens stay as the answer
    }
  }

  /** Follows the turn's run after its last event until the run ends or pauses. */
  const follow = async (key: string, signal: AbortSignal) => {
    const turn = turnOf(key)
    if (!turn?.runId) return
    await followRunEvents(turn.runId, (event) => onEvent(key, event), { fromSeq: turn.lastSeq + 1, signal })
    await finishSteps(key)
    await finishAnswer(key)
  }

  const begin = () => {
    controller?.abort()
    controller = new AbortController()
    set({ busy: true })
    return controller
  }
  const end = (mine: AbortController) => {
    if (controller === mine) {
      controller = null
      set({ busy: false })
    }
  }

  return {
    flowId: null,
    chatId: null,
    turns: [],
    busy: false,
    notice: null,
    tools: [],
    setTools: (tools) => set({ tools }),

    send: async (text) => {
      const message = text.trim()
      if (!message || get().busy) return false
      set({ notice: null })
      const current = useCurrentFlow.getState()
      let flowId = current.flowId
      if (current.dirty || !flowId) {
        if (!current.save) {
          set({ notice: 'Save the flow first' })
          return false
        }
        try {
          set({ busy: true })
          flowId = await current.save()
        } catch (error) {
          set({ busy: false, notice: `Could not save the flow: ${messageOf(error)}` })
          return false
        }
      }
      if (get().flowId !== null && get().flowId !== flowId) get().startOver()
      const key = `t${++counter}`
      set({ flowId, turns: [...get().turns, newTurn(key, message)] })
      const mine = begin()
      let replied = false
      try {
        await streamSse(
          `/api/flows/${encodeURIComponent(flowId)}/chat`,
          (frame) => {
            if (frame.event === 'ChatTurn') {
              const started = JSON.parse(frame.data) as { chat_id: string; run_id: string }
              set({ chatId: started.chat_id })
              useRunStatus.getState().reset(started.run_id)
              const turn = turnOf(key)
              if (turn) commit({ ...turn, runId: started.run_id, status: 'running' })
            } else if (frame.event === 'FlowStep') {
              const turn = turnOf(key)
              if (turn) commit(applyFlowStep(turn, JSON.parse(frame.data) as FlowStep))
            } else if (frame.event === 'ChatReply') {
              const reply = JSON.parse(frame.data) as ChatReply
              replied = true
              set({ chatId: reply.chat_id })
              const turn = turnOf(key)
              if (turn) commit(applyReply(turn, reply))
            } else {
              const event = eventOf(frame)
              if (event) onEvent(key, event)
            }
          },
          {
            method: 'POST',
            json: {
              message,
              chat_id: get().chatId ?? undefined,
              stream: true,
              tools: get().tools.length ? get().tools : undefined,
            },
            signal: mine.signal,
          },
        )
        // The chat stream ended before its reply (a dropped connection): the run goes on
        // in the server; follow its events.
        const turn = turnOf(key)
        if (!replied && turn?.runId && !mine.signal.aborted && (turn.status === 'running' || turn.status === 'starting')) {
          await follow(key, mine.signal)
        }
      } catch (error) {
        if (!mine.signal.aborted) {
          const turn = turnOf(key)
          if (turn?.runId) {
            // The connection broke mid-run: follow the run's events instead.
            try {
              await follow(key, mine.signal)
            } catch (again) {
              const now = turnOf(key)
              if (now && !mine.signal.aborted) commit({ ...now, error: { message: `Lost the run's events: ${messageOf(again)}` } })
            }
          } else if (turn) {
            commit({ ...turn, status: 'failed', error: { message: messageOf(error) } })
          }
        }
      } finally {
        end(mine)
      }
      return true
    },

    answer: async (key, nodeId, value) => {
      const turn = turnOf(key)
      if (!turn?.runId) return
      await api(`/api/runs/${encodeURIComponent(turn.runId)}/resume`, {
        method: 'POST',
        json: { answers: { [nodeId]: value } },
      })
      if (useRunStatus.getState().runId !== turn.runId) useRunStatus.getState().reset(turn.runId)
      const now = turnOf(key)
      if (now) commit({ ...now, status: 'running', waiting: now.waiting.filter((w) => w.nodeId !== nodeId) })
      const mine = begin()
      try {
        await follow(key, mine.signal)
      } catch (error) {
        const t = turnOf(key)
        if (t && !mine.signal.aborted) commit({ ...t, error: { message: `Lost the run's events: ${messageOf(error)}` } })
      } finally {
        end(mine)
      }
    },

    stop: async (key) => {
      const turn = turnOf(key)
      if (!turn?.runId) return
      try {
        await api(`/api/runs/${encodeURIComponent(turn.runId)}/cancel`, { method: 'POST' })
      } catch (error) {
        set({ notice: messageOf(error) })
      }
    },

    startOver: () => {
      controller?.abort()
      controller = null
      set({ flowId: null, chatId: null, turns: [], busy: false, notice: null })
      useRunStatus.getState().reset(null)
    },

    openFlow: (flowId) => {
      const current = get().flowId
      if (flowId !== null && current !== null && current !== flowId) get().startOver()
    },
  }
})
