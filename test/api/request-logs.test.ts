import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { sql } from 'kysely'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { LineBatch } from '../../src/logger.js'
import { createServices } from '../../src/services/index.js'
import { prepareStore } from '../../src/services/store-setup.js'
import { openStore } from '../../src/store/database.js'
import { freshStoreConfig } from '../helpers/stores.js'

/** A fresh SQLite store with its services and a first admin key. */
async function freshStore() {
  const fresh = await freshStoreConfig('sqlite')
  const store = openStore(fresh.config)
  await prepareStore(store)
  const services = createServices({ store, config: loadConfig({}) })
  const { createdSecret } = await services.operator.bootstrap(null)
  return { fresh, store, services, createdSecret }
}

describe('request logs', () => {
  it('write one line per request and never a secret', async () => {
    const { fresh, store, services, createdSecret } = await freshStore()
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
      const first = await app.inject({
        method: 'POST',
        url: '/v1/applications',
        headers: auth,
        payload: { name: 'x', description: '' },
      })
      const listed = await app.inject({ method: 'GET', url: '/v1/applications', headers: auth })
      const refused = await app.inject({
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
      const rest = [listed, refused, created]
      const text = lines.join('\n')
      expect(text).not.toContain(String(createdSecret))
      expect(text).not.toContain(created.json().key)
      expect(text).not.toContain('wdn_wrong')
      const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request')
      expect(requests.map((r) => r.status)).toEqual([201, 200, 401, 201])
      expect(requests[0]).toMatchObject({ method: 'POST', url: '/v1/applications' })
      expect(requests.map((r) => r.reqId)).toEqual(
        [first, ...rest].map((response) => response.headers['x-request-id']),
      )

      // A 500: its details go to the log under the request id the client was given.
      const policies = `/v1/applications/${first.json().id}/policies`
      await app.inject({
        method: 'POST',
        url: policies,
        headers: auth,
        payload: { id: 'p', rules: [{ type: 'factuality' }], target: ['output'] },
      })
      await sql`drop table policy_revisions`.execute(store.db)
      const failed = await app.inject({
        method: 'PATCH',
        url: `${policies}/p`,
        headers: auth,
        payload: { target: ['input'] },
      })
      expect(failed.statusCode).toBe(500)
      const requestId = failed.json().request_id
      expect(failed.headers['x-request-id']).toBe(requestId)
      const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'unexpected error')
      expect(logged).toMatchObject({
        reqId: requestId,
        err: { message: expect.stringContaining('policy_revisions') },
      })
    } finally {
      await app.close()
      await store.close()
      await fresh.drop()
    }
  })

  it('write the access line of each request through the batched destination the server uses', async () => {
    const { fresh, store, services, createdSecret } = await freshStore()
    const dir = mkdtempSync(join(tmpdir(), 'warden-access-'))
    const file = join(dir, 'out.log')
    const lines = new LineBatch(pino.destination({ dest: file, sync: true }))
    const logger = pino({ level: 'info' }, lines)
    const app = await buildApp({ config: loadConfig({}), store, services, logger })
    try {
      const auth = { authorization: `Bearer ${createdSecret}` }
      const answers = [
        await app.inject({ method: 'GET', url: '/v1/applications?limit=2', headers: auth }),
        await app.inject({ method: 'GET', url: '/v1/applications/nope', headers: auth }),
        await app.inject({ method: 'GET', url: '/v1/applications' }),
      ]
      lines.flushSync()
      const logged = readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
        .filter((line) => line.msg === 'request')
      expect(logged).toEqual(
        answers.map((answer, i) => ({
          level: 30,
          time: expect.any(Number),
          pid: process.pid,
          hostname: expect.any(String),
          reqId: answer.headers['x-request-id'],
          method: 'GET',
          url: ['/v1/applications?limit=2', '/v1/applications/nope', '/v1/applications'][i],
          status: answer.statusCode,
          ms: expect.any(Number),
          msg: 'request',
        })),
      )
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 404, 401])
    } finally {
      await app.close()
      await store.close()
      await fresh.drop()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
