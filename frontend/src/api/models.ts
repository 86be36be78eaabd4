// Named shapes of the nodeloom HTTP API for the UI (docs/api.md). They are picked out of
// ./types.ts, which scripts/gen-api-types generates from the server's /openapi.json, so a
// change on the server shows up here as a type error. Written by hand: the narrowings the
// schema cannot say (a `str` field that holds one of a few values, the extra fields a node
// definition passes through), and the shapes the schema does not cover (the native graph
// document, run events of the event stream).

import type { components } from './types'

type Schemas = components['schemas']
/** A schema's declared fields, without the `[key: string]: unknown` of an open model. */
type Declared<T> = { [K in keyof T as string extends K ? never : K]: T[K] }
/** A schema's declared fields, some of them narrowed. */
type Narrowed<T, U> = Omit<Declared<T>, keyof U> & U

/** The parameter types of node definitions (src/nodeloom/plugins/contract.py). */
export type ParameterType =
  | 'string' | 'text' | 'number' | 'integer' | 'boolean' | 'enum' | 'json'
  | 'code' | 'graph' | 'expression'

export type Parameter = Narrowed<
  Schemas['ParameterModel'],
  {
    type: ParameterType
    default: unknown
    /** The socket type of a hybrid parameter's side socket (handle id = parameter id). */
    socket?: string
    description?: string
    options?: string[]
    // Passed through from the definition (the model is open): how the control looks.
    placeholder?: string
    language?: string
    minimum?: number
    maximum?: number
    /** Secret-capable: may hold `{{ $credentials.NAME }}` (docs/credentials.md). */
    secret?: boolean
  }
>

export type Port = Narrowed<
  Schemas['PortModel'],
  {
    /** A parameter naming how many times this port repeats (Switch's `cases`). */
    repeat?: string | null
    /** Present only while this parameter has this value (Approval's `timeout` port). */
    when?: { parameter: string; equals: unknown } | null
    description?: string
  }
>

export type NodeDefinition = Narrowed<
  Schemas['NodeDefinitionModel'],
  {
    execution_mode: 'flow' | 'structural' | 'hybrid'
    inputs: Port[]
    outputs: Port[]
    parameters: Parameter[]
    side_effects: 'pure' | 'idempotent' | 'external'
    output_shape: unknown
  }
>

export type SocketType = Narrowed<Schemas['SocketTypeModel'], { shape: 'circle' | 'square' | 'diamond' | 'dashed-circle' }>

export type PluginFailure = Schemas['PluginFailureModel']

export type Catalogue = Narrowed<
  Schemas['Catalogue'],
  { nodes: NodeDefinition[]; common_parameters: Parameter[]; socket_types: SocketType[] }
>

export type Issue = Schemas['IssueModel']

export type FlowSummary = Schemas['FlowSummaryModel']

export type FlowVersion = Narrowed<Schemas['FlowVersionModel'], { document: GraphDocument }>

export type RunStatus = Schemas['RunModel']['status']

export type RunRecord = Schemas['RunModel'] & { [key: string]: unknown }

export type EvaluationSummary = Schemas['EvaluationSummary']

export type Evaluation = Schemas['Evaluation']

/** A graph in the native format (docs/formats/native.md); the API types it as an object. */
export interface GraphNode {
  id: string
  type: string
  data: Record<string, unknown>
  position?: { x: number; y: number }
}

export interface GraphEdge {
  id: string
  source: string
  sourceHandle?: string | null
  target: string
  targetHandle?: string | null
}

export interface GraphDocument {
  name?: string
  description?: string
  variables?: Record<string, unknown>
  nodes: GraphNode[]
  edges: GraphEdge[]
  [key: string]: unknown
}

/** One event of a run (frames of GET /api/runs/{id}/events carry it as `data`; docs/api.md). */
export interface RunEvent {
  seq: number
  run_id: string
  event_type: string
  node_id: string | null
  node_name: string | null
  node_type: string | null
  /** Seconds since the epoch. */
  timestamp: number
  data: Record<string, unknown>
  [key: string]: unknown
}

/** A `flow_step` block (seed 003): one card per node execution of a chat turn, built by
 * the server (src/nodeloom/flow_steps.py) so every client shows the same cards. */
export type FlowStep = Schemas['FlowStep']

/** A user tool the server offers for chat turns (GET /api/tools). */
export type UserTool = Schemas['UserToolModel']

/** A recorded run's flow_step blocks (GET /api/runs/{id}/steps). */
export type RunSteps = Schemas['RunSteps']

/** The worker registry's live processes with their load, and the queue (GET /api/workers). */
export type WorkerList = Schemas['WorkerList']

export type WorkerInfo = Schemas['WorkerModel']

export type QueueInfo = Schemas['QueueModel']

/** One part of GET /api/health: fixed codes and counts only (the schema does not type it). */
export interface HealthCheck {
  ok: boolean
  /** `unreachable`, `timeout`, `unknown`, `no_worker_seen`. */
  error?: string
  /** The queue's: false when the server runs its runs itself. */
  configured?: boolean
  /** The workers': processes seen recently, and how many of each role. */
  live?: number | null
  roles?: Record<string, number>
}

/** GET /api/health: 200 when every check passes, else 503 with the same body. */
export interface HealthReport {
  status: 'ok' | 'failing'
  failing: string[]
  checks: Record<string, HealthCheck>
}
