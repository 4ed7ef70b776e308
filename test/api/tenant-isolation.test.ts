import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { systemClock } from '../../src/clock.js'
import { RuleChecks } from '../../src/evaluation/rule-checks.js'
import type { Judge } from '../../src/judge/judge.js'
import { Classifier } from '../../src/rules/detectors/classifier/linear.js'
import { PoliciesService } from '../../src/services/policies.service.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { brokenWorker, evaluationWorker } from '../helpers/evaluation-worker.js'
import { STORE_KINDS } from '../helpers/stores.js'

/**
 * One tenant tried as a hostile one would against another, through the API: every request here
 * is well formed, and none may slow, fail or inform another workspace's.
 */

/** An OpenAI-compatible judge on 127.0.0.1 that holds every question whose text says `hostile`. */
async function startJudge() {
  const questions: string[] = []
  const held: ServerResponse[] = []
  let holding = true
  const arrivals: (() => void)[] = []
  const answer = (res: ServerResponse, score: number) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: JSON.stringify({ score, reason: 'judged' }) },
            finish_reason: 'stop',
          },
        ],
      }),
    )
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8')
    })
    req.on('end', () => {
      const question = JSON.parse(body).messages[1].content as string
      questions.push(question)
      if (holding && question.includes('hostile')) held.push(res)
      else answer(res, 0.9)
      for (const notify of arrivals.splice(0)) notify()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    questions,
    held,
    /** Resolves once at least `n` questions are held. */
    async holding(n: number) {
      while (held.length < n) await new Promise<void>((resolve) => arrivals.push(resolve))
    },
    /** Answers what is held, and from now on every question at once. */
    release() {
      holding = false
      for (const res of held.splice(0)) answer(res, 0.9)
    },
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

describe.each(STORE_KINDS)('one tenant cannot hurt another: the judge (%s)', (kind) => {
  let judge: Awaited<ReturnType<typeof startJudge>>
  let t: TestApp
  let victim: string
  let attacker: string

  const evaluate = (key: string, content: string) =>
    t.request({
      method: 'POST',
      url: '/v1/applications/bot/evaluations',
      key,
      payload: {
        messages: [{ role: 'user', content }],
        draft_policies: [
          { id: 'secrets', rules: [{ type: 'custom' }], target: ['input'], definition: 'No secrets.' },
        ],
      },
    })

  beforeAll(async () => {
    judge = await startJudge()
    t = await createTestApp(kind, {
      JUDGE_BASE_URL: judge.url,
      JUDGE_MODEL: 'judge-model',
      // A hung call outlives every test here: nothing may wait for one.
      JUDGE_TIMEOUT_MS: '60000',
    })
    victim = await t.key(['admin'], { workspace: 'victim' })
    attacker = await t.key(['admin'], { workspace: 'attacker' })
    for (const key of [victim, attacker]) {
      const created = await t.request({
        method: 'POST',
        url: '/v1/applications',
        key,
        payload: { id: 'bot', name: 'Bot', description: '' },
      })
      expect(created.statusCode, created.body).toBe(201)
    }
  })
  afterAll(async () => {
    judge.release()
    await t?.close()
    await judge?.close()
  })

  it('never answers one workspace’s question from another’s cached answer', async () => {
    const before = judge.questions.length
    const first = await evaluate(victim, 'my bank PIN is 7391')
    expect(first.json().policies[0].rules[0]).toMatchObject({ status: 'pass', score: 0.9 })
    expect(judge.questions.length).toBe(before + 1)
    // The same question from the same workspace comes from the cache.
    await evaluate(victim, 'my bank PIN is 7391')
    expect(judge.questions.length).toBe(before + 1)
    // The attacker's probe for the same PIN is asked again: no hit tells it what the victim sent.
    await evaluate(attacker, 'my bank PIN is 7391')
    expect(judge.questions.length).toBe(before + 2)
  })

  it('answers a workspace’s judged evaluation while another’s 64 hang in the judge', async () => {
    const flood = Array.from({ length: 64 }, (_, i) => evaluate(attacker, `hostile ${i}`))
    // The attacker holds half of JUDGE_MAX_CONCURRENCY (16), never more.
    await judge.holding(8)
    const answered = await evaluate(victim, 'Where is my order?')
    expect(answered.statusCode, answered.body).toBe(200)
    expect(answered.json().policies[0].rules[0]).toMatchObject({
      status: 'pass',
      score: 0.9,
      reason: 'judged',
    })
    expect(judge.held).toHaveLength(8)
    judge.release()
    for (const res of await Promise.all(flood)) expect(res.statusCode).toBe(200)
  })
})

describe.each(STORE_KINDS)('one tenant cannot hurt another: the evaluation pool (%s)', (kind) => {
  let t: TestApp
  let victim: string
  let attacker: string
  let release: () => void = () => {}
  let asked: () => void = () => {}
  let questions = 0

  /** Holds the first question it is asked until `release`; answers every later one at once. */
  const judge: Judge = {
    model: 'held',
    score() {
      questions++
      if (questions > 1) return Promise.resolve({ score: 0.9, reason: 'fine' })
      asked()
      return new Promise((resolve) => {
        release = () => resolve({ score: 0.9, reason: 'fine' })
      })
    },
  }

  beforeAll(async () => {
    t = await createTestApp(
      kind,
      // Every evaluation goes to the pool, whose default is two workers.
      { EVALUATION_POOL_MIN_MS: '0' },
      { judge, evaluationWorker: await evaluationWorker(), evaluationPoolTimeoutMs: 500 },
    )
    victim = await t.key(['admin'], { workspace: 'victim' })
    attacker = await t.key(['admin'], { workspace: 'attacker' })
    for (const key of [victim, attacker])
      await t.request({
        method: 'POST',
        url: '/v1/applications',
        key,
        payload: { id: 'bot', name: 'Bot', description: '' },
      })
  })
  afterAll(async () => {
    await t?.close()
  })

  it('answers a workspace’s evaluation 200 though another’s, beside it in a worker, runs past the timeout', async () => {
    // 1 MB of distinct phone numbers against 16 pii and 14 digit regex rules: seconds of work.
    let phones = ''
    for (let i = 0; phones.length < 1_000_000; i++)
      phones += `+1 212 ${String(200 + (i % 700)).padStart(3, '0')} ${String(i % 10_000).padStart(4, '0')} `
    const heavy = {
      messages: [{ role: 'user', content: phones }],
      draft_policies: [
        {
          id: 'flood',
          rules: [
            ...Array.from({ length: 16 }, () => ({ type: 'pii' })),
            ...Array.from({ length: 14 }, () => ({ type: 'regex', value: '[0-9]' })),
          ],
          target: ['input'],
        },
      ],
    }
    const waiting = new Promise<void>((resolve) => {
      asked = resolve
    })
    const mine = t.request({
      method: 'POST',
      url: '/v1/applications/bot/evaluations',
      key: victim,
      payload: {
        messages: [{ role: 'user', content: `${'Where is my order? '.repeat(5000)}Call +44 20 7946 0958.` }],
        draft_policies: [
          {
            id: 'guard',
            rules: [{ type: 'pii' }, { type: 'custom' }],
            target: ['input'],
            definition: 'On topic.',
          },
        ],
      },
    })
    // The victim's evaluation is in a worker, waiting for the judge...
    await waiting
    // ...when the attacker's runs past the pool's timeout: only the attacker's fails.
    const theirs = await t.request({
      method: 'POST',
      url: '/v1/applications/bot/evaluations',
      key: attacker,
      payload: heavy,
    })
    expect(theirs.statusCode, theirs.body).toBe(503)
    release()
    const answered = await mine
    expect(answered.statusCode, answered.body).toBe(200)
    expect(answered.json().policies[0].rules.map((r: { status: string }) => r.status)).toEqual([
      'fail',
      'pass',
    ])
  })
})

describe.each(STORE_KINDS)('work priced by what it costs goes off the event loop (%s)', (kind) => {
  let t: TestApp

  beforeAll(async () => {
    // A worker that never answers: an evaluation sent to the pool answers 503 once its time is
    // up, one left on the event loop 200. Which one it was is what these tests read.
    t = await createTestApp(
      kind,
      {},
      { evaluationWorker: brokenWorker('silent'), evaluationPoolTimeoutMs: 200 },
    )
    const created = await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'bot', name: 'Bot', description: '' },
    })
    expect(created.statusCode, created.body).toBe(201)
  })
  afterAll(async () => {
    await t?.close()
  })

  const evaluate = (content: string, rules: object[]) =>
    t.request({
      method: 'POST',
      url: '/v1/applications/bot/evaluations',
      payload: {
        messages: [{ role: 'user', content }],
        draft_policies: [{ id: 'draft', rules, target: ['input'] }],
      },
    })

  /** 64 distinct valid patterns, 3.4 KB in all, each costing RE2 tens of milliseconds to compile. */
  const costly = Array.from({ length: 64 }, (_, i) => ({
    type: 'regex' as const,
    value: `\\p{Greek}{1000}c${i}`,
  }))

  it('compiles a draft of costly patterns in the pool, never on the event loop (it held it for 2.2–6.5 s)', async () => {
    expect((await evaluate('hello', costly)).statusCode).toBe(503)
    // A draft of cheap patterns is still checked and evaluated on the event loop.
    expect((await evaluate('hello', [{ type: 'regex', value: 'order [0-9]+' }])).statusCode).toBe(200)
  })

  it('checks costly patterns in the pool for a create, a PATCH and a test run’s draft (policies:read)', async () => {
    const create = await t.request({
      method: 'POST',
      url: '/v1/applications/bot/policies',
      payload: { id: 'costly', rules: costly, target: ['input'] },
    })
    expect(create.statusCode, create.body).toBe(503)
    const cheap = await t.request({
      method: 'POST',
      url: '/v1/applications/bot/policies',
      payload: { id: 'cheap', rules: [{ type: 'length', value: '100' }], target: ['input'] },
    })
    expect(cheap.statusCode, cheap.body).toBe(201)
    const patch = await t.request({
      method: 'PATCH',
      url: '/v1/applications/bot/policies/cheap',
      headers: { 'content-type': 'application/merge-patch+json' },
      payload: { rules: costly },
    })
    expect(patch.statusCode, patch.body).toBe(503)
    const run = await t.request({
      method: 'POST',
      url: '/v1/applications/bot/policies/cheap/test-runs',
      key: await t.key(['policies:read']),
      payload: { draft: { id: 'cheap', rules: costly, target: ['input'] } },
    })
    expect(run.statusCode, run.body).toBe(503)
  })

  it('evaluates a stored revision too costly to compile on the event loop only in the pool', async () => {
    // Stored by a service without a pool (which checks on the event loop), as an import would.
    const policies = new PoliciesService({
      store: t.store,
      clock: systemClock,
      checks: new RuleChecks({ pool: null }),
    })
    const app = await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'stored', name: 'Stored', description: '' },
    })
    expect(app.statusCode, app.body).toBe(201)
    await policies.create(t.workspaceId, 'stored', { id: 'costly', rules: costly, target: ['input'] })
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications/stored/evaluations',
      payload: { messages: [{ role: 'user', content: 'hello' }] },
    })
    expect(res.statusCode, res.body).toBe(503)
  })

  it('sends text whose folding expands it (330,000 × U+FDFA, 7 keywords rules) to the pool', async () => {
    const keywords = Array.from({ length: 7 }, (_, i) => ({ type: 'keywords', flagged: [`word${i}`] }))
    // Plain text of the same size stays on the event loop...
    expect((await evaluate('a'.repeat(330_000), keywords)).statusCode).toBe(200)
    // ...and the text that folds to 18 times its length does not: it held the loop for 1.9 s.
    expect((await evaluate('\uFDFA'.repeat(330_000), keywords)).statusCode).toBe(503)
  })
})

describe.each(STORE_KINDS)('a body the schema refuses compiles nothing (%s)', (kind) => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp(kind)
    await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'bot', name: 'Bot', description: '' },
    })
    await t.request({
      method: 'POST',
      url: '/v1/applications/bot/policies',
      payload: { id: 'guard', rules: [{ type: 'length', value: '100' }], target: ['input'] },
    })
  })
  afterAll(async () => {
    await t?.close()
  })

  // 300 distinct costly patterns (over the 64 rules a policy may hold): compiling them held the
  // event loop for 17 s. Each is also one RE2 refuses, so a compiled one would show as an error.
  const rules = Array.from({ length: 300 }, (_, i) => ({ type: 'regex', value: `\\p{Greek}{1000}c${i}(` }))

  it.each([
    [
      'an evaluation’s draft',
      '/v1/applications/bot/evaluations',
      { messages: [{ role: 'user', content: 'x' }], draft_policies: [{ id: 'd', rules, target: ['input'] }] },
    ],
    [
      'a test run’s draft, which a policies:read key may send',
      '/v1/applications/bot/policies/guard/test-runs',
      { draft: { id: 'guard', rules, target: ['input'] } },
    ],
    ['a policy create', '/v1/applications/bot/policies', { id: 'd', rules, target: ['input'] }],
  ])('%s: 422 for the schema, no pattern read', async (_name, url, payload) => {
    const key = url.endsWith('test-runs') ? await t.key(['policies:read']) : t.adminKey
    const res = await t.request({ method: 'POST', url, key, payload })
    expect(res.statusCode, res.body).toBe(422)
    const pointers = res.json().errors.map((e: { pointer: string }) => e.pointer) as string[]
    expect(pointers.some((p) => p.endsWith('/rules'))).toBe(true)
    expect(pointers.filter((p) => p.endsWith('/value'))).toEqual([])
  })
})

describe.each(STORE_KINDS)('nothing remembered for one workspace answers another (%s)', (kind) => {
  let t: TestApp
  let victim: string
  let attacker: string
  beforeAll(async () => {
    t = await createTestApp(kind, { EVALUATION_POOL_SIZE: '0' })
    victim = await t.key(['admin'], { workspace: 'victim' })
    attacker = await t.key(['admin'], { workspace: 'attacker' })
    for (const key of [victim, attacker]) {
      await t.request({
        method: 'POST',
        url: '/v1/applications',
        key,
        payload: { id: 'bot', name: 'Bot', description: '' },
      })
      await t.request({
        method: 'POST',
        url: '/v1/applications/bot/policies',
        key,
        payload: {
          id: 'guard',
          rules: [{ type: 'prompt_injection' }, { type: 'toxicity' }],
          target: ['input'],
        },
      })
    }
  })
  afterAll(async () => {
    vi.restoreAllMocks()
    await t?.close()
  })

  it('scores a text again for another workspace: the offline models’ remembered scores are per workspace', async () => {
    const scored = vi.spyOn(Classifier.prototype, 'score')
    const evaluate = (key: string) =>
      t.request({
        method: 'POST',
        url: '/v1/applications/bot/evaluations',
        key,
        payload: { messages: [{ role: 'user', content: 'The wire code for the Lisbon account is 7391.' }] },
      })
    expect((await evaluate(victim)).statusCode).toBe(200)
    const once = scored.mock.calls.length
    expect(once).toBeGreaterThan(0)
    // The same workspace again: remembered, not scored.
    await evaluate(victim)
    expect(scored.mock.calls.length).toBe(once)
    // Another workspace's probe for the same text is scored afresh: no faster answer tells it.
    await evaluate(attacker)
    expect(scored.mock.calls.length).toBe(2 * once)
  })
})
