import react from '@vitejs/plugin-react'
import { defineConfig } from 'vitest/config'

// The bundle is built into the Python package (src/nodeloom/web), which serves it at `/` (nodeloom serve).
// `npm run dev` proxies the API to a server on :8000 (`nodeloom serve --dev`).
const server = process.env.NODELOOM_URL ?? 'http://127.0.0.1:8000'

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: '../src/nodeloom/web',
    emptyOutDir: true,
    chunkSizeWarningLimit: 2000,
  },
  server: {
    proxy: { '/api': { target: server, ws: true }, '/v1': server },
  },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
  },
})
