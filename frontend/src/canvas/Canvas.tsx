// The React Flow surface of one canvas store: wires checked by the one connection rule,
// refused drops explained, nodes dropped from the palette, minimap, zoom, background.

import {
  Background,
  BackgroundVariant,
  Controls,
  MiniMap,
  ReactFlow,
  useReactFlow,
  type FinalConnectionState,
  type IsValidConnection,
} from '@xyflow/react'
import { useCallback, useEffect, useMemo, type DragEvent, type ReactNode } from 'react'
import type { Catalogue } from '../api/models'
import type { FlowEdge, FlowNode } from '../flow/types'
import { useRunStatus } from '../state/runStatus'
import { NodeCard } from './NodeCard'
import { NODE_MIME } from './Palette'
import { useCanvas, useCanvasStore } from './store'

// At module scope, so React Flow never sees a new object (xyflow examples).
const nodeTypes = { nodeloom: NodeCard }
const DELETE_KEYS = null // deletion is the editor's shortcut, one undo step for nodes and wires
const fitViewOptions = { padding: 0.15, maxZoom: 1 }
const proOptions = { hideAttribution: true }
const minimapStyle = { width: 150, height: 100 }

function minimapColor(catalogue: Catalogue) {
  return (node: FlowNode) => {
    const d = catalogue.nodes.find((n) => n.id === node.data.kind)
    if (!d) return '#555'
    return d.execution_mode === 'structural' ? '#f59e0b' : d.execution_mode === 'hybrid' ? '#7c3aed' : '#6d8cff'
  }
}

export function Canvas({ catalogue, readOnly, children }: { catalogue: Catalogue; readOnly?: boolean; children?: ReactNode }) {
  const store = useCanvasStore()
  const storeNodes = useCanvas((s) => s.nodes)
  const prefix = useCanvas((s) => s.prefix)
  const runStatus = useRunStatus((s) => s.nodes)
  // The run status also marks React Flow's own node element (`data-status`), for tests and styles.
  const nodes = useMemo(() => {
    if (!Object.keys(runStatus).length) return storeNodes
    return storeNodes.map((node) => {
      const status = runStatus[prefix + node.id]
      return status ? { ...node, domAttributes: { 'data-status': status } as FlowNode['domAttributes'] } : node
    })
  }, [storeNodes, runStatus, prefix])
  const edges = useCanvas((s) => s.edges)
  const onNodesChange = useCanvas((s) => s.onNodesChange)
  const onEdgesChange = useCanvas((s) => s.onEdgesChange)
  const connect = useCanvas((s) => s.connect)
  const refusal = useCanvas((s) => s.refusal)
  const flow = useReactFlow<FlowNode, FlowEdge>()
  const nodeColor = useMemo(() => minimapColor(catalogue), [catalogue])

  const isValidConnection: IsValidConnection<FlowEdge> = useCallback(
    (wire) => store.getState().check(wire).ok,
    [store],
  )

  const onConnectEnd = useCallback(
    (_: MouseEvent | TouchEvent, state: FinalConnectionState) => {
      if (state.isValid !== false || !state.toHandle || !state.fromHandle) return
      const from = state.fromHandle
      const to = state.toHandle
      if (from.type === to.type) {
        store.getState().setRefusal(`Connect an output (right side) to an input (left side), not ${from.type} to ${to.type}`)
        return
      }
      const wire =
        from.type === 'source'
          ? { source: from.nodeId, sourceHandle: from.id, target: to.nodeId, targetHandle: to.id }
          : { source: to.nodeId, sourceHandle: to.id, target: from.nodeId, targetHandle: from.id }
      const result = store.getState().check(wire)
      if (!result.ok) store.getState().setRefusal(result.reason)
    },
    [store],
  )

  useEffect(() => {
    if (!refusal) return
    const timer = setTimeout(() => store.getState().setRefusal(null), 8000)
    return () => clearTimeout(timer)
  }, [refusal, store])

  const onDragOver = useCallback((event: DragEvent) => {
    if (event.dataTransfer.types.includes(NODE_MIME)) {
      event.preventDefault()
      event.dataTransfer.dropEffect = 'move'
    }
  }, [])

  const onDrop = useCallback(
    (event: DragEvent) => {
      const type = event.dataTransfer.getData(NODE_MIME)
      if (!type || readOnly) return
      event.preventDefault()
      const position = flow.screenToFlowPosition({ x: event.clientX, y: event.clientY })
      store.getState().addNode(type, { x: position.x - 20, y: position.y - 20 })
    },
    [flow, store, readOnly],
  )

  const onNodeDragStart = useCallback(() => store.getState().record(), [store])

  return (
    <div className="canvas-main" onDragOver={onDragOver} onDrop={onDrop}>
      <ReactFlow<FlowNode, FlowEdge>
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={connect}
        onConnectEnd={onConnectEnd}
        isValidConnection={isValidConnection}
        onNodeDragStart={onNodeDragStart}
        deleteKeyCode={DELETE_KEYS}
        selectionKeyCode="Shift"
        multiSelectionKeyCode={['Meta', 'Control']}
        nodesDraggable={!readOnly}
        nodesConnectable={!readOnly}
        onlyRenderVisibleElements={nodes.length > 150}
        minZoom={0.1}
        maxZoom={2}
        fitView
        fitViewOptions={fitViewOptions}
        proOptions={proOptions}
        colorMode="dark"
      >
        <Background variant={BackgroundVariant.Dots} gap={20} size={1} />
        <Controls position="bottom-left" />
        <MiniMap position="bottom-right" pannable zoomable nodeColor={nodeColor} ariaLabel="Mini map" style={minimapStyle} />
      </ReactFlow>
      {children}
      {storeNodes.length === 0 && (
        <p className="canvas-empty">Drag a node from the palette, or focus one and press Enter.</p>
      )}
      {refusal && (
        <div className="connection-refused" role="alert" data-testid="connection-refused">
          <strong>Connection refused:</strong> {refusal}
          <button type="button" aria-label="Dismiss" className="small" onClick={() => store.getState().setRefusal(null)}>
            ×
          </button>
        </div>
      )}
    </div>
  )
}
