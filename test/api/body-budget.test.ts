import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'

/**
 * The bytes of request bodies in flight, per workspace and in all (WORKSPACE_BODY_BUDGET_BYTES,
 * BODY_BUDGET_BYTES): a body that does not fit is answered 503 with Retry-After, another
 * workspace's is not, and whatever way a request ends gives its bytes back.
 */

const KiB = 1024
const env = {
  BODY_LIMIT_BYTES: String(16 * KiB),
  EVALUATIONS_BODY_LIMIT_BYTES: String(64 * KiB),
  CHAT_COMPLETIONS_BODY_LIMIT_BYTES: String(64 * KiB),
  WORKSPACE_BODY_BUDGET_BYTES: String(64 * KiB),
  BODY_BUDGET_BYTES: String(128 * KiB),
}
const path = '/v1/applications/bot/evaluations'

/** An evaluation body of exactly `bytes` bytes: one user turn, no policy. */
function evaluationBody(bytes: number, role = 'user'): string {
  const empty = JSON.stringify({ messages: [{ role, content: '' }], policies: [] })
  return empty.replace('""', `"${'x'.repeat(bytes - empty.length)}"`)
}

/**
 * A body sent in parts, as a slow client sends one: `reading` resolves once the server reads it
 * (its bytes are held by then), `rest` sends the remainder and ends it, `abort` makes the client
 * go away.
 */
function slowBody(first: string) {
  let started: () => void = () => {}
  const reading = new Promise<void>((resolve) => {
    started = resolve
  })
  const stream = new (class extends Readable {
    // The server has taken the first part: it read the body, after its budget was checked.
    override read(size?: number) {
      const chunk = super.read(size)
      if (chunk !== null) started()
      return chunk
    }
  })({ read() {} })
  stream.push(first)
  return {
    stream,
    reading,
    rest(rest: string) {
      stream.push(rest)
      stream.push(null)
    },
    abort: () => stream.destroy(new Error('the client went away')),
  }
}

describe.each(STORE_KINDS)('body budget (%s)', (kind) => {
  let t: TestApp
  let other: string
  let third: string

  beforeAll(async () => {
    t = await createTestApp(kind, env)
    other = await t.key(['admin'], { workspace: 'other' })
    third = await t.key(['admin'], { workspace: 'third' })
    for (const key of [t.adminKey, other, third]) {
      const app = await t.request({
        method: 'POST',
        url: '/v1/applications',
        key,
        payload: { id: 'bot', name: 'Bot', description: '' },
      })
      expect(app.statusCode).toBe(201)
    }
  })
  afterAll(async () => t.close())

  const evaluate = (body: string, key?: string) =>
    t.request({
      method: 'POST',
      url: path,
      key,
      headers: { 'content-type': 'application/json' },
      payload: body,
    })

  /** A request whose declared body is `bytes` long, of which only a first part is sent for now. */
  function held(bytes: number, key = t.adminKey) {
    const body = evaluationBody(bytes)
    const slow = slowBody(body.slice(0, 100))
    const answer = t.app.inject({
      method: 'POST',
      url: path,
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'content-length': String(bytes),
      },
      payload: slow.stream,
    })
    return { ...slow, answer, finish: () => slow.rest(body.slice(100)) }
  }

  it('answers a body over its workspace’s budget 503 with Retry-After at once, and serves another workspace’s', async () => {
    const first = held(40 * KiB)
    await first.reading
    expect(t.app.bodyBudget.held(t.workspaceId)).toBe(40 * KiB)

    const refused = problem(await evaluate(evaluationBody(30 * KiB)), 503, 'unavailable')
    expect(refused.detail).toBe(
      "This workspace's request bodies in flight would pass its budget of 64 KiB (WORKSPACE_BODY_BUDGET_BYTES); retry once some are answered",
    )
    const again = await evaluate(evaluationBody(30 * KiB))
    expect(again.statusCode).toBe(503)
    expect(again.headers['retry-after']).toBe('1')

    const elsewhere = await evaluate(evaluationBody(30 * KiB), other)
    expect(elsewhere.statusCode, elsewhere.body).toBe(200)
    // A small body still fits beside the one in flight.
    expect((await evaluate(evaluationBody(20 * KiB))).statusCode).toBe(200)

    first.finish()
    expect((await first.answer).statusCode).toBe(200)
    expect(t.app.bodyBudget.held()).toBe(0)
    expect((await evaluate(evaluationBody(60 * KiB))).statusCode).toBe(200)
  })

  it('answers 503 when the bodies of all workspaces would pass the server’s budget', async () => {
    const mine = held(60 * KiB)
    await mine.reading
    const theirs = held(60 * KiB, other)
    await theirs.reading
    const refused = problem(await evaluate(evaluationBody(10 * KiB), third), 503, 'unavailable')
    expect(refused.detail).toBe(
      "The request bodies in flight would pass this server's budget of 128 KiB (BODY_BUDGET_BYTES); retry shortly",
    )
    mine.finish()
    theirs.finish()
    expect((await mine.answer).statusCode).toBe(200)
    expect((await theirs.answer).statusCode).toBe(200)
    expect((await evaluate(evaluationBody(10 * KiB), third)).statusCode).toBe(200)
  })

  it('gives the bytes back after an error answer', async () => {
    problem(await evaluate(evaluationBody(60 * KiB, 'nobody')), 422, 'validation_error')
    expect(t.app.bodyBudget.held()).toBe(0)
    expect((await evaluate(evaluationBody(60 * KiB))).statusCode).toBe(200)
  })

  it('gives the bytes back when the client goes away before its body is sent', async () => {
    const gone = held(60 * KiB)
    await gone.reading
    expect(t.app.bodyBudget.held(t.workspaceId)).toBe(60 * KiB)
    gone.abort()
    await gone.answer.catch(() => undefined)
    expect(t.app.bodyBudget.held()).toBe(0)
    expect((await evaluate(evaluationBody(60 * KiB))).statusCode).toBe(200)
  })

  it('counts a body of unknown length as it arrives, and refuses it once it passes the budget', async () => {
    const first = held(40 * KiB)
    await first.reading
    // Chunked, without Content-Length: 20 KiB fit beside the 40 KiB in flight, 10 KiB more do not.
    const body = new Readable({ read() {} })
    body.push(`{"messages":[{"role":"user","content":"${'x'.repeat(20 * KiB)}`)
    body.push('x'.repeat(10 * KiB))
    const refused = await t.app.inject({
      method: 'POST',
      url: path,
      headers: {
        authorization: `Bearer ${t.adminKey}`,
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
      },
      payload: body,
    })
    // Answered while the body was still arriving: it never ended.
    expect(problem(refused, 503, 'unavailable').detail).toMatch(/WORKSPACE_BODY_BUDGET_BYTES/)
    expect(refused.headers['retry-after']).toBe('1')
    body.destroy()
    first.finish()
    expect((await first.answer).statusCode).toBe(200)
    expect(t.app.bodyBudget.held()).toBe(0)
    expect((await evaluate(evaluationBody(60 * KiB))).statusCode).toBe(200)
  })

  it('holds nothing for a body its route refuses for its size: that is a 413', async () => {
    const res = await evaluate(evaluationBody(65 * KiB))
    problem(res, 413, 'payload_too_large')
    expect(t.app.bodyBudget.held()).toBe(0)
  })

  it('holds nothing for a request whose key is refused: the body is not read', async () => {
    const slow = slowBody(evaluationBody(60 * KiB).slice(0, 100))
    const res = await t.app.inject({
      method: 'POST',
      url: path,
      headers: {
        authorization: 'Bearer wdn_unknown',
        'content-type': 'application/json',
        'content-length': '61440',
      },
      payload: slow.stream,
    })
    // Answered without the body ever being sent.
    problem(res, 401, 'unauthenticated')
    expect(t.app.bodyBudget.held()).toBe(0)
    slow.abort()
  })
})
