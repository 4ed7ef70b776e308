import { once } from 'node:events'
import { type ClientRequest, request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import SQLite from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call } from '../helpers/http.js'
import { startServer } from '../helpers/process.js'
import { freshStoreConfig, STORE_KINDS, type TestStoreConfig } from '../helpers/stores.js'
import { eventually } from '../helpers/wait.js'

const KEY_LINE = /^ {4}(wdn_[A-Za-z0-9_-]{43})$/m

/** Whether a connection to the port is refused (true) or accepted, then closed at once (false). */
const refused = (port: number) =>
  new Promise<boolean>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNREFUSED' ? resolve(true) : reject(error),
    )
  })

describe.each(STORE_KINDS)('warden serve, as a user runs it (%s)', (kind) => {
  let store: TestStoreConfig
  beforeAll(async () => {
    store = await freshStoreConfig(kind)
  })
  afterAll(async () => {
    await store.drop()
  })

  it('prints an admin key once, serves both operations, keeps data across a restart, and stops cleanly', async () => {
    const first = await startServer(store.env)
    const key = KEY_LINE.exec(first.stdout())?.[1]
    expect(key, first.stdout()).toBeDefined()
    if (!key) return
    // Logs are JSON lines; the key stands alone on its own line, outside any log record.
    expect(first.stdout().match(/wdn_/g)?.length).toBe(2)

    const app = await call(`${first.url}/v1/applications`, 'POST', key, {
      id: 'support-bot',
      name: 'Support bot',
      description: 'Answers questions.',
      provider: 'openai',
      model: 'gpt-4o',
      parameters: { temperature: 0.2, max_tokens: 512 },
    })
    expect(app.status).toBe(201)
    expect(app.headers.get('location')).toBe('/v1/applications/support-bot')
    expect(app.headers.get('etag')).toMatch(/^".+"$/)
    const policy = await call(`${first.url}/v1/applications/support-bot/policies`, 'POST', key, {
      id: 'no-pii',
      rules: [{ type: 'pii', flagged: ['email'] }],
      target: ['output'],
    })
    expect(policy.status).toBe(201)
    expect(policy.body.revision).toBe(1)
    expect(await first.stop('SIGTERM')).toBe(0)

    const second = await startServer(store.env)
    expect(second.stdout()).not.toMatch(KEY_LINE)
    // Both records survived: creating them again conflicts.
    expect(
      (
        await call(`${second.url}/v1/applications`, 'POST', key, {
          id: 'support-bot',
          name: 'x',
          description: '',
        })
      ).status,
    ).toBe(409)
    expect(
      (
        await call(`${second.url}/v1/applications/support-bot/policies`, 'POST', key, {
          id: 'no-pii',
          rules: [{ type: 'relevance' }],
          target: ['output'],
        })
      ).status,
    ).toBe(409)
    expect((await fetch(`${second.url}/readyz`)).status).toBe(200)
    expect(await second.stop('SIGTERM')).toBe(0)
  })

  it('replays an idempotent create after a restart', async () => {
    const adminKey = 'operator-chosen-secret-0123456789'
    const env = { ...store.env, WARDEN_ADMIN_KEY: adminKey }
    const send = (url: string) =>
      fetch(`${url}/v1/applications`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${adminKey}`,
          'content-type': 'application/json',
          'idempotency-key': 'restart-1',
        },
        body: JSON.stringify({ name: 'Survives restarts', description: '' }),
      })
    const first = await startServer(env)
    const original = await send(first.url)
    const originalBody = await original.text()
    expect(original.status).toBe(201)
    expect(await first.stop()).toBe(0)

    const second = await startServer(env)
    try {
      const replay = await send(second.url)
      expect(replay.status).toBe(201)
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect(replay.headers.get('location')).toBe(original.headers.get('location'))
      expect(await replay.text()).toBe(originalBody)
    } finally {
      expect(await second.stop()).toBe(0)
    }
  })

  it('uses WARDEN_ADMIN_KEY as an admin key of workspace default and prints no key', async () => {
    const adminKey = 'operator-chosen-secret-0123456789'
    const server = await startServer({ ...store.env, WARDEN_ADMIN_KEY: adminKey })
    try {
      expect(server.stdout()).not.toMatch(KEY_LINE)
      const res = await call(`${server.url}/v1/applications`, 'POST', adminKey, {
        name: 'Env',
        description: '',
      })
      expect(res.status).toBe(201)
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })

  it('finishes a request in flight on SIGTERM, then refuses new connections and exits 0', async () => {
    const adminKey = 'operator-chosen-secret-0123456789'
    // A grace period no slow machine runs out of: this test is about finishing, not giving up.
    const server = await startServer({
      ...store.env,
      WARDEN_ADMIN_KEY: adminKey,
      SHUTDOWN_GRACE_SECONDS: '600',
    })
    const body = JSON.stringify({ name: 'In flight', description: 'sent in two halves' })
    let req: ClientRequest | undefined
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req = httpRequest(
        `${server.url}/v1/applications`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${adminKey}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            // The server's 100 Continue says it has read the head and handed the request on.
            expect: '100-continue',
          },
        },
        (res) => {
          let text = ''
          res.setEncoding('utf8').on('data', (c: string) => {
            text += c
          })
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
        },
      )
      req.on('error', reject)
    })
    if (!req) throw new Error('no request')
    req.flushHeaders()
    await once(req, 'continue')
    req.write(body.slice(0, 10))
    // The request is in flight (its head and half its body sent) when SIGTERM arrives; the rest
    // of it is sent only once the server is stopping and refuses new connections.
    server.proc.kill('SIGTERM')
    await server.printed('stopping: finishing requests in flight')
    await eventually('the listener closed while a request is in flight', () => refused(server.port))
    req.end(body.slice(10))
    const result = await answer
    expect(result.status).toBe(201)
    expect(JSON.parse(result.body).name).toBe('In flight')
    expect(await server.exited).toBe(0)
    // Every log line reached standard output before the process ended: the in-flight request's
    // access line, then the last one.
    const logged = server
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
    expect(logged.find((line) => line.msg === 'request' && line.method === 'POST')).toMatchObject({
      status: 201,
    })
    expect(logged.at(-1)).toMatchObject({ msg: 'stopped' })
    expect(await refused(server.port)).toBe(true)
  })

  it('answers 413 to a client still sending a body over 1 MiB, before closing', async () => {
    const adminKey = 'operator-chosen-secret-0123456789'
    const server = await startServer({ ...store.env, WARDEN_ADMIN_KEY: adminKey })
    try {
      for (const chunked of [false, true, false, true, false, true]) {
        const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
          const size = 3 * 1024 * 1024
          const req = httpRequest(`${server.url}/v1/applications`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${adminKey}`,
              'content-type': 'application/json',
              ...(chunked ? {} : { 'content-length': size }),
            },
          })
          req.on('response', (res) => {
            let text = ''
            res.setEncoding('utf8').on('data', (c: string) => {
              text += c
            })
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
          })
          req.on('error', reject)
          const chunk = Buffer.alloc(64 * 1024, 'a')
          let sent = 0
          const pump = () => {
            while (sent < size) {
              sent += chunk.length
              if (!req.write(chunk)) return req.once('drain', pump)
            }
            req.end()
          }
          pump()
        })
        expect(result.status, `chunked=${chunked}`).toBe(413)
        expect(JSON.parse(result.body).code).toBe('payload_too_large')
      }
    } finally {
      await server.stop()
    }
  })

  if (kind === 'sqlite') {
    it('runs SQLite in WAL mode with synchronous=FULL', async () => {
      const path = store.env.DATABASE_URL?.slice('sqlite:'.length) ?? ''
      const db = new SQLite(path, { readonly: true })
      try {
        expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
        const rows = db.prepare('select count(*) as n from applications').get() as { n: number }
        expect(rows.n).toBeGreaterThanOrEqual(3)
      } finally {
        db.close()
      }
    })
  }
})
