import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call } from '../helpers/http.js'
import { type RunningServer, runCli, startServer } from '../helpers/process.js'
import { freshStoreConfig, type TestStoreConfig } from '../helpers/stores.js'

const KEY_LINE = /^ {4}(wdn_[A-Za-z0-9_-]{43})$/m

const freePort = () =>
  new Promise<number>((done) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => done(port))
    })
  })

describe('a second warden serve on the same host', () => {
  let first: RunningServer
  let firstStore: TestStoreConfig
  let metricsPort: number
  const stores: TestStoreConfig[] = []
  const fresh = async () => {
    const store = await freshStoreConfig('sqlite')
    stores.push(store)
    return store
  }

  beforeAll(async () => {
    firstStore = await fresh()
    metricsPort = await freePort()
    first = await startServer({ ...firstStore.env, METRICS_PORT: String(metricsPort) })
  })
  afterAll(async () => {
    await first?.stop()
    for (const store of stores) await store.drop()
  })

  it('stops on a metrics port in use with one line naming METRICS_PORT, and still shows the key it created', async () => {
    const store = await fresh()
    const second = runCli(['serve'], { ...store.env, PORT: '0', METRICS_PORT: String(metricsPort) })
    expect(second.status).toBe(1)
    expect(second.stderr).toBe(
      `warden: port ${metricsPort} (METRICS_PORT) on 127.0.0.1 is already in use; set METRICS_PORT to a free port, or to 0 to turn metrics off\n`,
    )
    // The API port was free, but the start failed: it never said it was listening.
    expect(second.stdout).not.toContain('Server listening')
    expect(second.stdout).not.toContain('metrics listening')
    // The failed start created the store's first admin key; it is shown, since no later start
    // creates another.
    const key = KEY_LINE.exec(second.stdout)?.[1]
    expect(key, second.stdout).toBeDefined()

    const again = await startServer(store.env)
    try {
      expect(again.stdout()).not.toMatch(KEY_LINE)
      expect((await call(`${again.url}/v1/applications`, 'GET', key ?? '')).status).toBe(200)
    } finally {
      await again.stop()
    }
  })

  it('stops on an API port in use with one line naming PORT', async () => {
    const store = await fresh()
    const second = runCli(['serve'], { ...store.env, PORT: String(first.port), METRICS_PORT: '0' })
    expect(second.status).toBe(1)
    expect(second.stderr).toBe(
      `warden: port ${first.port} (PORT) on 127.0.0.1 is already in use; set PORT to a free port\n`,
    )
    expect(second.stdout).toMatch(KEY_LINE)
    expect(second.stdout).not.toContain('listening')
    // The lines logged before the failure are written as the process exits (server.ts).
    expect(second.stdout).toContain('"msg":"store migrated"')
  })

  it('the first server is unharmed by either', async () => {
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200)
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(200)
  })
})
