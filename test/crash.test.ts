import SQLite from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningServer, startServer } from './helpers/process.js'
import { freshStoreConfig, type TestStoreConfig } from './helpers/stores.js'

const ADMIN = 'crash-admin-secret-0123456789abcdef'
const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }

interface Acknowledged {
  url: string
  body: string
}

/**
 * Drives concurrent creates of applications and policies until `stop` is called, recording the
 * body of every 201. Requests cut off by the server's end count as unacknowledged.
 */
function driveLoad(server: RunningServer, workers: number) {
  const acknowledged: Acknowledged[] = []
  let otherAnswers = 0
  let cutOff = 0
  let running = true
  let n = 0
  const token = Math.random().toString(36).slice(2, 8)
  const loops = Array.from({ length: workers }, async (_, w) => {
    while (running) {
      const i = n++
      const policy = i % 2 === 1
      const url = policy
        ? `${server.url}/v1/applications/crash-home/policies`
        : `${server.url}/v1/applications`
      const body = policy
        ? {
            id: `p-${token}-${w}-${i}`,
            rules: [{ type: 'pii' }, { type: 'keywords', flagged: [`w${i}`] }],
            target: ['output'],
          }
        : { name: `app ${w}-${i}`, description: 'x'.repeat(200) }
      try {
        const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) })
        const text = await res.text()
        if (res.status === 201) {
          acknowledged.push({ url: `${res.headers.get('location')}`, body: text })
        } else {
          otherAnswers++
        }
      } catch {
        cutOff++
      }
    }
  })
  return {
    acknowledged,
    counts: () => ({ otherAnswers, cutOff }),
    async stop() {
      running = false
      await Promise.all(loops)
    },
  }
}

describe('crash safety on SQLite', () => {
  let store: TestStoreConfig
  beforeAll(async () => {
    store = await freshStoreConfig('sqlite')
    const server = await startServer({ ...store.env, WARDEN_ADMIN_KEY: ADMIN, RATE_LIMIT_PER_MINUTE: '0' })
    await fetch(`${server.url}/v1/applications`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ id: 'crash-home', name: 'Home', description: '' }),
    })
    await server.stop()
  })
  afterAll(async () => {
    await store.drop()
  })

  async function verify(acknowledged: Acknowledged[]) {
    const server = await startServer({ ...store.env, WARDEN_ADMIN_KEY: ADMIN, RATE_LIMIT_PER_MINUTE: '0' })
    try {
      let lost = 0
      for (const ack of acknowledged) {
        const res = await fetch(`${server.url}${ack.url}`, { headers })
        if (res.status !== 200 || (await res.text()) !== ack.body) lost++
      }
      return lost
    } finally {
      expect(await server.stop()).toBe(0)
    }
  }

  /** Every policy has exactly the revisions 1..revision: nothing half-written. */
  function halfWritten(): number {
    const db = new SQLite(store.env.DATABASE_URL?.slice('sqlite:'.length) ?? '', { readonly: true })
    try {
      const row = db
        .prepare(
          `select count(*) as n from policies p
           where (select count(*) from policy_revisions r
                  where r.workspace_id = p.workspace_id and r.application_id = p.application_id
                    and r.policy_id = p.id) != p.revision`,
        )
        .get() as { n: number }
      return row.n
    } finally {
      db.close()
    }
  }

  it('loses no acknowledged record and half-writes nothing when killed with SIGKILL mid-load, 3 times', async () => {
    const totals = { acknowledged: 0, lost: 0, cutOff: 0, halfWritten: 0 }
    for (let round = 0; round < 3; round++) {
      const server = await startServer({ ...store.env, WARDEN_ADMIN_KEY: ADMIN, RATE_LIMIT_PER_MINUTE: '0' })
      const load = driveLoad(server, 16)
      await new Promise((resolve) => setTimeout(resolve, 300 + round * 150))
      server.proc.kill('SIGKILL')
      await server.exited
      await load.stop()
      const lost = await verify(load.acknowledged)
      totals.acknowledged += load.acknowledged.length
      totals.lost += lost
      totals.cutOff += load.counts().cutOff
      totals.halfWritten += halfWritten()
      expect(load.counts().otherAnswers).toBe(0)
    }
    console.log(
      `crash safety: 3 SIGKILLs, ${totals.acknowledged} acknowledged creates, ${totals.lost} lost, ${totals.cutOff} cut off in flight, ${totals.halfWritten} half-written`,
    )
    expect(totals.acknowledged).toBeGreaterThan(100)
    expect(totals.lost).toBe(0)
    expect(totals.halfWritten).toBe(0)
  })

  it('finishes the requests in flight on SIGTERM under load, exits 0, and loses nothing acknowledged', async () => {
    const server = await startServer({ ...store.env, WARDEN_ADMIN_KEY: ADMIN, RATE_LIMIT_PER_MINUTE: '0' })
    const load = driveLoad(server, 16)
    await new Promise((resolve) => setTimeout(resolve, 400))
    server.proc.kill('SIGTERM')
    expect(await server.exited).toBe(0)
    await load.stop()
    // Nothing in flight got an error answer: each request either completed or was never accepted.
    expect(load.counts().otherAnswers).toBe(0)
    expect(await verify(load.acknowledged)).toBe(0)
    expect(halfWritten()).toBe(0)
    console.log(
      `graceful stop: ${load.acknowledged.length} acknowledged, ${load.counts().cutOff} refused after the stop began, 0 lost`,
    )
  })
})
