import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { driveUntilStopped, type RunningServer, startServer } from '../helpers/process.js'
import { freshStoreConfig, STORE_KINDS, type TestStoreConfig } from '../helpers/stores.js'

const ADMIN = 'crash-admin-secret-0123456789abcdef'
const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }
const CARD = '4111 1111 1111 1111'

/**
 * Clients evaluating concurrently until `stop`, recording every evaluation answered with a 200:
 * its id and verdict. Requests cut off by the server's end count as unacknowledged.
 */
function driveEvaluations(server: RunningServer, workers: number) {
  const acknowledged: { id: string; verdict: string }[] = []
  const drive = driveUntilStopped(workers, async (i) => {
    const content = i % 3 === 0 ? `My card is ${CARD}, refund? (${i})` : `Where is order ${i}?`
    const res = await fetch(`${server.url}/v1/applications/crash-log/evaluations`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ messages: [{ role: 'user', content }] }),
    })
    const text = await res.text()
    if (res.status !== 200) return false
    const { id, verdict } = JSON.parse(text)
    acknowledged.push({ id, verdict })
    return true
  })
  return { acknowledged, ...drive }
}

describe.each(STORE_KINDS)('the evaluation log under a crash (%s)', (kind) => {
  let store: TestStoreConfig
  const env = () => ({ ...store.env, WARDEN_ADMIN_KEY: ADMIN, RATE_LIMIT_PER_MINUTE: '0' })
  beforeAll(async () => {
    store = await freshStoreConfig(kind)
    const server = await startServer(env())
    await fetch(`${server.url}/v1/applications`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ id: 'crash-log', name: 'Crash', description: '' }),
    })
    await fetch(`${server.url}/v1/applications/crash-log/policies`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ id: 'no-pii', rules: [{ type: 'pii' }], target: ['input'] }),
    })
    await server.stop()
  })
  afterAll(async () => {
    await store.drop()
  })

  it('reads back every evaluation a client received a 200 for, after SIGKILL mid-load, 3 times', async () => {
    const all: { id: string; verdict: string }[] = []
    let cutOff = 0
    for (let round = 0; round < 3; round++) {
      const server = await startServer(env())
      const load = driveEvaluations(server, 16)
      // Killed once a number of evaluations have been answered, a different one each round.
      await load.untilAcknowledged(60 + round * 40)
      server.proc.kill('SIGKILL')
      await server.exited
      await load.stop()
      expect(load.counts().otherAnswers).toBe(0)
      all.push(...load.acknowledged)
      cutOff += load.counts().cutOff
    }
    const server = await startServer(env())
    try {
      const lost: string[] = []
      for (const { id, verdict } of all) {
        const res = await fetch(`${server.url}/v1/applications/crash-log/evaluations/${id}`, { headers })
        const entry = res.status === 200 ? ((await res.json()) as { id: string; verdict: string }) : null
        if (entry?.id !== id || entry?.verdict !== verdict) lost.push(id)
      }
      // And the list walks over every one of them, with nothing repeated.
      const listed = new Set<string>()
      let repeated = 0
      let cursor: string | null = null
      do {
        const page = (await (
          await fetch(
            `${server.url}/v1/applications/crash-log/evaluations?limit=200${cursor ? `&cursor=${cursor}` : ''}`,
            { headers },
          )
        ).json()) as { data: { id: string; messages: { content: string }[] }[]; next_cursor: string | null }
        for (const entry of page.data) {
          if (listed.has(entry.id)) repeated++
          listed.add(entry.id)
          expect(entry.messages[0]?.content).not.toContain(CARD)
        }
        cursor = page.next_cursor
      } while (cursor)
      console.log(
        `evaluation log crash safety (${kind}): 3 SIGKILLs, ${all.length} acknowledged evaluations, ${lost.length} lost, ${cutOff} cut off in flight, ${listed.size} listed`,
      )
      expect(all.length).toBeGreaterThan(100)
      expect(lost).toEqual([])
      expect(repeated).toBe(0)
      for (const { id } of all) expect(listed.has(id)).toBe(true)
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })
})
