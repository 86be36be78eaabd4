// The shapes of the nodeloom HTTP API (docs/api.md; the schema is at /openapi.json).

export type ParameterType =
  | 'string' | 'text' | 'number' | 'integer' | 'boolean' | 'enum' | 'json'
  | 'code' | 'graph' | 'expression'

export interface Parameter {
  id: string
  type: ParameterType
  label: string
  default: unknown
  required: boolean
  hybrid: boolean
  /** The socket type of a hybrid parameter's side socket (handle id = parameter id). */
  socket?: string
  description?: string
  placeholder?: string
  language?: string
  options?: string[]
  minimum?: number
  maximum?: number
}

export interface Port {
  id: string
  socket: string
  label: string
  required: boolean
  multiple: boolean
  /** A parameter naming how many times this port repeats (Switch's `cases`). */
  repeat?: string | null
  description?: string
}

export interface NodeDefinition {
  id: string
  name: string
  category: string
  description: string
  icon: string
  execution_mode: 'flow' | 'structural' | 'hybrid'
  inputs: Port[]
  outputs: Port[]
  main_output: string
  parameters: Parameter[]
  side_effects: 'pure' | 'idempotent' | 'external'
  streaming: boolean
  trigger: boolean
  interactive: boolean
  output_shape: unknown
}

export interface SocketType {
  id: string
  color: string
  shape: 'circle' | 'square' | 'diamond'
  description: string
  structural: boolean
}

export interface Catalogue {
  nodes: NodeDefinition[]
  common_parameters: Parameter[]
  socket_types: SocketType[]
  coercions: { from: string; to: string }[]
  failures: { folder?: string; message?: string }[]
}

/** A graph in the native format (docs/formats/native.md). */
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

export interface Issue {
  code: string
  message: string
  node_id?: string | null
  field?: string | null
  edge_id?: string | null
}

export interface FlowSummary {
  id: string
  name: string
  latest_version: number
  created_at: string
  updated_at: string
}

export interface FlowVersion {
  flow_id: string
  name: string
  version: number
  document: GraphDocument
  document_hash: string
  created_at: string
}

export type RunStatus = 'running' | 'paused' | 'completed' | 'failed' | 'cancelled' | 'interrupted'

export interface RunRecord {
  id: string
  status: RunStatus
  flow_id: string | null
  flow_version: number | null
  trigger: unknown
  chat_id: string | null
  created_at: string
  started_at: string | null
  finished_at: string | null
  duration_ms: number | null
  [key: string]: unknown
}

/** One event of a run (frames of GET /api/runs/{id}/events carry it as `data`). */
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
