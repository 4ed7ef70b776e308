import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call } from '../helpers/http.js'
import { startServer } from '../helpers/process.js'
import { freshStoreConfig, type TestStoreConfig } from '../helpers/stores.js'

const ADMIN = 'wdn_metrics_process_test_key_0123456789'

const freePort = () =>
  new Promise<number>((done) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => done(port))
    })
  })

describe('the metrics listener of warden serve', () => {
  let store: TestStoreConfig
  beforeAll(async () => {
    store = await freshStoreConfig('sqlite')
  })
  afterAll(async () => {
    await store.drop()
  })

  it('serves the series after traffic on METRICS_PORT, apart from the API, and stops with the server', async () => {
    const metricsPort = await freePort()
    const server = await startServer({
      ...store.env,
      WARDEN_ADMIN_KEY: ADMIN,
      METRICS_PORT: String(metricsPort),
    })
    try {
      await call(`${server.url}/v1/applications`, 'POST', ADMIN, { id: 'bot', name: 'Bot', description: '' })
      await call(`${server.url}/v1/applications/bot/policies`, 'POST', ADMIN, {
        id: 'no-cards',
        rules: [{ type: 'pii', flagged: ['credit_card'] }],
        target: ['input'],
      })
      const evaluated = await call(`${server.url}/v1/applications/bot/evaluations`, 'POST', ADMIN, {
        messages: [{ role: 'user', content: 'My card is 4111 1111 1111 1111' }],
      })
      expect(evaluated.status).toBe(200)
      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
      expect(res.status).toBe(200)
      const page = await res.text()
      expect(page).toMatch(
        /warden_evaluations_total\{workspace_id="[0-9a-f-]{36}",application_id="bot",verdict="fail",action="block"\} 1/,
      )
      expect(page).toMatch(
        /warden_policy_evaluations_total\{workspace_id="[0-9a-f-]{36}",application_id="bot",policy_id="no-cards",verdict="fail",action="block"\} 1/,
      )
      expect(page).toMatch(
        /warden_http_request_duration_seconds_count\{route="\/v1\/applications\/:application_id\/evaluations",method="POST",status="200"\} 1/,
      )
      expect(page).toContain('warden_rule_duration_seconds_count{type="pii",method="detector"} 1')
      expect(page).toContain('nodejs_eventloop_lag_seconds{stat="p99"}')
      // The API's port does not serve metrics, and the metrics port does not serve the API.
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404)
      expect((await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).status).toBe(404)
      expect(server.stdout()).toContain('metrics listening on /metrics')
    } finally {
      expect(await server.stop()).toBe(0)
    }
    // Closed with the server.
    await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow()
  })

  it('listens on METRICS_HOST, and only there', async () => {
    const metricsPort = await freePort()
    const server = await startServer({
      ...store.env,
      WARDEN_ADMIN_KEY: ADMIN,
      METRICS_PORT: String(metricsPort),
      METRICS_HOST: '127.0.0.2',
    })
    try {
      const res = await fetch(`http://127.0.0.2:${metricsPort}/metrics`)
      expect(res.status).toBe(200)
      expect(await res.text()).toContain('# TYPE warden_http_request_duration_seconds histogram')
      // Not on the default host: nothing listens on 127.0.0.1 at that port.
      await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow()
      expect(server.stdout()).toMatch(/"host":"127\.0\.0\.2".*metrics listening on \/metrics/)
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })

  it('does not listen with METRICS_PORT=0', async () => {
    const server = await startServer({ ...store.env, WARDEN_ADMIN_KEY: ADMIN, METRICS_PORT: '0' })
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
      expect(server.stdout()).not.toContain('metrics listening')
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })
})
