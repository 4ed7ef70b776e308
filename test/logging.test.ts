import { Writable } from 'node:stream'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { createServices } from '../src/services/index.js'
import { openStore } from '../src/store/database.js'
import { migrateToLatest } from '../src/store/migrations.js'
import { freshStoreConfig } from './helpers/stores.js'

describe('request logs', () => {
  it('write one line per request and never a secret', async () => {
    const fresh = await freshStoreConfig('sqlite')
    const store = openStore(fresh.config)
    await migrateToLatest(store)
    const services = createServices(store)
    const { createdSecret } = await services.keys.bootstrap(null)
    const lines: string[] = []
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).trim().split('\n'))
        done()
      },
    })
    const logger = pino(
      { level: 'debug', redact: { paths: ['req.headers.authorization'], censor: '[redacted]' } },
      sink,
    )
    const app = await buildApp({ config: loadConfig({}), store, services, logger })
    try {
      const auth = { authorization: `Bearer ${createdSecret}` }
      await app.inject({
        method: 'POST',
        url: '/v1/applications',
        headers: auth,
        payload: { name: 'x', description: '' },
      })
      await app.inject({ method: 'GET', url: '/v1/applications', headers: auth })
      await app.inject({
        method: 'GET',
        url: '/v1/applications',
        headers: { authorization: 'Bearer wdn_wrongwrongwrongwrongwrongwrongwrongwrong12' },
      })
      const created = await app.inject({
        method: 'POST',
        url: '/v1/api-keys',
        headers: auth,
        payload: { name: 'k', scopes: ['admin'] },
      })
      const text = lines.join('\n')
      expect(text).not.toContain(String(createdSecret))
      expect(text).not.toContain(created.json().key)
      expect(text).not.toContain('wdn_wrong')
      const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request')
      expect(requests.map((r) => r.status)).toEqual([201, 200, 401, 201])
      expect(requests[0]).toMatchObject({
        method: 'POST',
        url: '/v1/applications',
        reqId: expect.any(String),
      })
    } finally {
      await app.close()
      await store.close()
      await fresh.drop()
    }
  })
})
