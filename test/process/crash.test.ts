import SQLite from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { driveUntilStopped, type RunningServer, startServer } from '../helpers/process.js'
import { freshStoreConfig, type TestStoreConfig } from '../helpers/stores.js'

const ADMIN = 'crash-admin-secret-0123456789abcdef'
const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }

interface Acknowledged {
  /** Where the acknowledged version can be read again. */
  url: string
  body: string
}

/**
 * Drives concurrent creates of applications and policies, and changes to the policies created,
 * until `stop` is called, recording every acknowledged version: the body of each 201 at its
 * Location, and each 200 to a PATCH as that revision. Requests cut off by the server's end
 * count as unacknowledged.
 */
function driveLoad(server: RunningServer, workers: number) {
  const acknowledged: Acknowledged[] = []
  const token = Math.random().toString(36).slice(2, 8)
  const lastPolicy: (string | null)[] = []
  const drive = driveUntilStopped(workers, async (i, w) => {
    const last = lastPolicy[w] ?? null
    const step = i % 3
    const policy = step === 1
    const patch = step === 2 && last !== null
    const url = patch
      ? `${server.url}${last}`
      : policy
        ? `${server.url}/v1/applications/crash-home/policies`
        : `${server.url}/v1/applications`
    const body = patch
      ? { override_response: `changed ${i}` }
      : policy
        ? {
            id: `p-${token}-${w}-${i}`,
            rules: [{ type: 'pii' }, { type: 'keywords', flagged: [`w${i}`] }],
            target: ['output'],
          }
        : { name: `app ${w}-${i}`, description: 'x'.repeat(200) }
    const res = await fetch(url, { method: patch ? 'PATCH' : 'POST', headers, body: JSON.stringify(body) })
    const text = await res.text()
    if (patch && res.status === 200) {
      acknowledged.push({ url: `${last}/revisions/${JSON.parse(text).revision}`, body: text })
      return true
    }
    if (res.status !== 201) return false
    const location = `${res.headers.get('location')}`
    // A policy may be changed later: its first version stays readable as revision 1.
    acknowledged.push({ url: policy ? `${location}/revisions/1` : location, body: text })
    if (policy) lastPolicy[w] = location
    return true
  })
  return { acknowledged, ...drive }
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
        // A revision is shown through the response schema, a record as the text it was stored with.
        const text = res.status === 200 ? await res.text() : ''
        const same = ack.url.includes('/revisions/')
          ? JSON.stringify(JSON.parse(text)) === JSON.stringify(JSON.parse(ack.body))
          : text === ack.body
        if (res.status !== 200 || !same) lost++
      }
      return lost
    } finally {
      expect(await server.stop()).toBe(0)
    }
  }

  /**
   * Every policy at revision n has stored exactly its past revisions 1..n-1 (the current one lives
   * in its row): nothing half-written.
   */
  function halfWritten(): number {
    const db = new SQLite(store.env.DATABASE_URL?.slice('sqlite:'.length) ?? '', { readonly: true })
    try {
      const row = db
        .prepare(
          `select count(*) as n from policies p
           where (select count(*) || ' ' || coalesce(max(r.revision), 0) from policy_revisions r
                  where r.workspace_id = p.workspace_id and r.application_id = p.application_id
                    and r.policy_id = p.id) != (p.revision - 1) || ' ' || (p.revision - 1)`,
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
      // Killed once a number of writes have been acknowledged, a different one each round.
      await load.untilAcknowledged(60 + round * 30)
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
      `crash safety: 3 SIGKILLs, ${totals.acknowledged} acknowledged writes, ${totals.lost} lost, ${totals.cutOff} cut off in flight, ${totals.halfWritten} half-written`,
    )
    expect(totals.acknowledged).toBeGreaterThan(100)
    expect(totals.lost).toBe(0)
    expect(totals.halfWritten).toBe(0)
  })

  it('finishes the requests in flight on SIGTERM under load, exits 0, and loses nothing acknowledged', async () => {
    const server = await startServer({ ...store.env, WARDEN_ADMIN_KEY: ADMIN, RATE_LIMIT_PER_MINUTE: '0' })
    const load = driveLoad(server, 16)
    await load.untilAcknowledged(80)
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
