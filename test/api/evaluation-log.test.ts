import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import type { Clock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import { Evaluator } from '../../src/evaluation/evaluator.js'
import type { Judge } from '../../src/judge/judge.js'
import { shippedClassifiers } from '../../src/models/shipped.js'
import {
  compilePolicy,
  evaluate as evaluatePolicies,
  MAX_REPORTED_FINDINGS,
} from '../../src/rules/evaluate.js'
import { EvaluationLogService, logEntry } from '../../src/services/evaluation-log.service.js'
import { EvaluationsService } from '../../src/services/evaluations.service.js'
import { createServices } from '../../src/services/index.js'
import { prepareStore } from '../../src/services/store-setup.js'
import { openStore } from '../../src/store/database.js'
import { StoreUnavailableError } from '../../src/store/errors.js'
import { migrateTo } from '../../src/store/migrator.js'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'
import { manualClock } from '../helpers/clock.js'
import { freshStoreConfig, STORE_KINDS } from '../helpers/stores.js'

const CARD = '4111 1111 1111 1111'
const CARD_DIGITS = '4111111111111111'
const EMAIL = 'jo.bloggs@example.com'
const OPENAI_KEY = 'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3i'

/** Every text value in every row of the log's two tables, for the ids given. */
async function rawLogTexts(t: TestApp, id: string): Promise<string[]> {
  const entries = await t.store.db.selectFrom('evaluations').selectAll().where('id', '=', id).execute()
  expect(entries).toHaveLength(1)
  const seq = entries[0]?.seq ?? -1
  const policies = await t.store.db
    .selectFrom('evaluation_policies')
    .selectAll()
    .where('seq', '=', seq)
    .execute()
  return [...entries, ...policies].flatMap((row) => Object.values(row).map(String))
}

describe.each(STORE_KINDS)('the evaluation log (%s)', (kind) => {
  let t: TestApp
  const evaluate = (application: string, payload: object, key?: string) =>
    t.request({
      method: 'POST',
      url: `/v1/applications/${application}/evaluations`,
      payload,
      ...(key ? { key } : {}),
    })
  const list = (application: string, query = '', key?: string) =>
    t.request({
      method: 'GET',
      url: `/v1/applications/${application}/evaluations${query}`,
      ...(key ? { key } : {}),
    })
  const createApp = async (id: string) => {
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id, name: id, description: '' },
    })
    expect(res.statusCode, res.body).toBe(201)
  }
  const createPolicy = async (application: string, body: object) => {
    const res = await t.request({
      method: 'POST',
      url: `/v1/applications/${application}/policies`,
      payload: body,
    })
    expect(res.statusCode, res.body).toBe(201)
  }
  /** An evaluations service writing on the same store at the times `clock` says. */
  const servicesAt = (clock: Clock) => {
    const defaults = loadConfig({})
    const log = new EvaluationLogService({ store: t.store, clock, content: 'redacted', retentionDays: 30 })
    return {
      log,
      evaluations: new EvaluationsService({
        store: t.store,
        evaluator: new Evaluator({ clock, judge: null, classifiers: shippedClassifiers(), poolMinMs: 0 }),
        log,
        maxWork: defaults.evaluationMaxWork,
      }),
    }
  }

  beforeAll(async () => {
    t = await createTestApp(kind)
    await createApp('bot')
    await createPolicy('bot', {
      id: 'no-pii',
      rules: [{ type: 'pii' }],
      target: ['input', 'output', 'context'],
      override_response: 'Sorry, I cannot share that.',
    })
    await createPolicy('bot', {
      id: 'tone',
      rules: [{ type: 'keywords', flagged: ['refund guarantee'] }],
      target: ['output'],
      mode: 'monitor',
    })
  })
  afterAll(async () => t.close())

  it('logs every evaluation: its answer, the key and request that asked, the revisions used', async () => {
    const key = await t.key(['evaluations:write', 'evaluations:read'])
    const keyId = (await t.services.authentication.authenticate(key))?.keyId
    const res = await evaluate(
      'bot',
      {
        messages: [
          { role: 'system', content: 'You are helpful.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: `My card is ${CARD}.` },
              { type: 'text', text: 'Refund?' },
            ],
          },
        ],
        context: ['Refunds within 30 days.'],
      },
      key,
    )
    expect(res.statusCode, res.body).toBe(200)
    const answer = res.json()
    expect(answer.verdict).toBe('fail')

    const got = await t.request({ method: 'GET', url: `/v1/applications/bot/evaluations/${answer.id}`, key })
    expect(got.statusCode, got.body).toBe(200)
    expect(got.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(got.headers.etag).toBe(`"${answer.id}"`)
    const logged = got.json()
    const [noPii, tone] = answer.policies
    expect(logged).toEqual({
      ...answer,
      policies: [
        {
          ...noPii,
          revision: 1,
          rules: [
            { ...noPii.rules[0], findings: [{ ...noPii.rules[0].findings[0], text: '[CREDIT_CARD]' }] },
          ],
        },
        tone,
      ],
      key_id: keyId,
      request_id: res.headers['x-request-id'],
      source: 'api',
      content: 'redacted',
      messages: [
        { role: 'system', content: 'You are helpful.' },
        { role: 'user', content: 'My card is [CREDIT_CARD].\nRefund?' },
      ],
      context: ['Refunds within 30 days.'],
    })
    expect(noPii.rules[0].findings[0].text).toBe(CARD)

    const page = await list('bot', '', key)
    expect(page.statusCode, page.body).toBe(200)
    expect(page.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(page.json().data[0]).toEqual(logged)
  })

  it('logs an evaluation of an application without policies, of drafts and of pinned revisions', async () => {
    await createApp('bare')
    const bare = (await evaluate('bare', { messages: [{ role: 'user', content: 'hi' }] })).json()
    const [entry] = (await list('bare')).json().data
    expect(entry).toMatchObject({ id: bare.id, verdict: 'pass', action: 'allow', policies: [] })

    const draft = await evaluate('bare', {
      messages: [{ role: 'user', content: 'hi' }],
      draft_policies: [{ id: 'try-me', rules: [{ type: 'keywords', flagged: ['hi'] }], target: ['input'] }],
    })
    expect(draft.statusCode, draft.body).toBe(200)
    const byDraft = (await list('bare', '?policy_id=try-me')).json().data
    expect(byDraft.map((e: { id: string }) => e.id)).toEqual([draft.json().id])
    expect(byDraft[0].policies[0]).toMatchObject({
      id: 'try-me',
      revision: null,
      draft: true,
      verdict: 'fail',
    })
    expect(byDraft[0].policies[0].rules[0].findings[0].text).toBe('[KEYWORD]')

    // The revision each policy was evaluated at: the current one, or the one pinned.
    await createPolicy('bare', {
      id: 'versioned',
      rules: [{ type: 'keywords', flagged: ['hi'] }],
      target: ['input'],
    })
    const patched = await t.request({
      method: 'PATCH',
      url: '/v1/applications/bare/policies/versioned',
      payload: { rules: [{ type: 'keywords', flagged: ['bye'] }] },
    })
    expect(patched.json().revision).toBe(2)
    const hi = [{ role: 'user', content: 'hi' }]
    const ids: string[] = []
    for (const policies of [null, ['versioned'], [{ id: 'versioned', revision: 1 }]]) {
      const res = await evaluate('bare', { messages: hi, policies })
      expect(res.statusCode, res.body).toBe(200)
      ids.push(res.json().id)
    }
    const logged = (await list('bare', '?policy_id=versioned')).json().data
    expect(
      logged.map((e: { id: string; verdict: string; policies: { id: string; revision: number }[] }) => [
        e.id,
        e.verdict,
        e.policies.map((p) => [p.id, p.revision]),
      ]),
    ).toEqual([
      [ids[2], 'fail', [['versioned', 1]]],
      [ids[1], 'pass', [['versioned', 2]]],
      [ids[0], 'pass', [['versioned', 2]]],
    ])
  })

  it('filters by verdict, source, policy, since and until, alone and together', async () => {
    await createApp('filters')
    await createPolicy('filters', {
      id: 'a',
      rules: [{ type: 'keywords', flagged: ['alpha'] }],
      target: ['input'],
    })
    await createPolicy('filters', {
      id: 'b',
      rules: [{ type: 'keywords', flagged: ['beta'] }],
      target: ['input'],
    })
    const clock = manualClock(1_800_000_000)
    const { evaluations } = servicesAt(clock)
    type Model = { id: string; created: number; verdict: string; source: string; policies: string[] }
    // What asked, in turn: the request's own source (api by default, or playground), or a
    // guarded chat completion's check (the service's option).
    const sources = ['api', 'playground', 'api', 'chat_input'] as const
    const model: Model[] = []
    const shapes: [string[] | null, string][] = [
      [null, 'alpha'],
      [['a'], 'hello'],
      [['b'], 'beta'],
      [null, 'nothing'],
      [['b'], 'alpha'],
      [['a', 'b'], 'alpha beta'],
    ]
    for (let i = 0; i < 24; i++) {
      // Three entries a second, so that the order within a second counts too.
      clock.now = 1_800_000_000 + Math.floor(i / 3) * 10
      const [policies, text] = shapes[i % shapes.length] as [string[] | null, string]
      const source = sources[i % sources.length] ?? 'api'
      const answer = await evaluations.evaluate(
        { workspaceId: t.workspaceId, keyId: 'k', requestId: `r${i}` },
        'filters',
        {
          messages: [{ role: 'user', content: text }],
          policies,
          ...(source === 'playground' ? { source } : {}),
        },
        source === 'chat_input' ? { source } : {},
      )
      model.push({
        id: answer.id,
        created: answer.created,
        verdict: answer.verdict,
        source,
        policies: policies ?? ['a', 'b'],
      })
    }
    const newestFirst = [...model].reverse()
    const cases: [string, (m: Model) => boolean][] = [
      ['', () => true],
      ['verdict=fail', (m) => m.verdict === 'fail'],
      ['verdict=pass', (m) => m.verdict === 'pass'],
      ['policy_id=a', (m) => m.policies.includes('a')],
      ['policy_id=b&verdict=pass', (m) => m.policies.includes('b') && m.verdict === 'pass'],
      ['source=playground', (m) => m.source === 'playground'],
      ['source=api&verdict=fail', (m) => m.source === 'api' && m.verdict === 'fail'],
      ['source=chat_input&policy_id=b', (m) => m.source === 'chat_input' && m.policies.includes('b')],
      [
        'source=playground&policy_id=a&verdict=pass&since=1800000010',
        (m) =>
          m.source === 'playground' &&
          m.policies.includes('a') &&
          m.verdict === 'pass' &&
          m.created >= 1_800_000_010,
      ],
      ['source=chat_output', () => false],
      ['since=1800000030', (m) => m.created >= 1_800_000_030],
      ['until=1800000030', (m) => m.created <= 1_800_000_030],
      ['since=1800000010&until=1800000040', (m) => m.created >= 1_800_000_010 && m.created <= 1_800_000_040],
      [
        'policy_id=a&verdict=fail&since=1800000010&until=1800000060',
        (m) =>
          m.policies.includes('a') &&
          m.verdict === 'fail' &&
          m.created >= 1_800_000_010 &&
          m.created <= 1_800_000_060,
      ],
      ['policy_id=nobody', () => false],
      ['since=1800000050&until=1800000040', () => false],
    ]
    for (const [query, keep] of cases) {
      const expected = newestFirst.filter(keep).map((m) => m.id)
      const res = await list('filters', `?limit=200&${query}`)
      expect(res.statusCode, res.body).toBe(200)
      expect(
        res.json().data.map((e: { id: string }) => e.id),
        query,
      ).toEqual(expected)
      for (const entry of res.json().data as { id: string; source: string }[])
        expect(entry.source).toBe(model.find((m) => m.id === entry.id)?.source)
      expect(res.json().next_cursor).toBeNull()
      // The same, a page of 4 at a time.
      const walked: string[] = []
      let cursor: string | null = null
      do {
        const page = await list('filters', `?limit=4&${query}${cursor ? `&cursor=${cursor}` : ''}`)
        expect(page.statusCode, page.body).toBe(200)
        walked.push(...page.json().data.map((e: { id: string }) => e.id))
        cursor = page.json().next_cursor
      } while (cursor)
      expect(walked, `${query} in pages`).toEqual(expected)
    }
  })

  it('pages with a cursor, skipping and repeating nothing while new entries arrive', async () => {
    await createApp('paging')
    await createPolicy('paging', {
      id: 'p',
      rules: [{ type: 'keywords', flagged: ['stop'] }],
      target: ['input'],
    })
    const clock = manualClock(1_800_100_000)
    const { evaluations } = servicesAt(clock)
    const logged: { id: string; verdict: string }[] = []
    const add = async (i: number) => {
      const answer = await evaluations.evaluate(
        { workspaceId: t.workspaceId, keyId: 'k', requestId: `r${i}` },
        'paging',
        { messages: [{ role: 'user', content: i % 2 ? 'stop' : 'go' }] },
      )
      logged.push({ id: answer.id, verdict: answer.verdict })
    }
    for (let i = 0; i < 25; i++) {
      // Many entries share a second: the order within it is the order they were logged in.
      if (i % 10 === 0) clock.now++
      await add(i)
    }
    for (const query of ['', '&policy_id=p', '&verdict=fail']) {
      const expected = [...logged]
        .reverse()
        .filter((e) => query !== '&verdict=fail' || e.verdict === 'fail')
        .map((e) => e.id)
      // Entries logged during the walk are newer than its start: a walk never meets them.
      const walked: string[] = []
      let cursor: string | null = null
      let n = 100
      do {
        const page = await list('paging', `?limit=7${query}${cursor ? `&cursor=${cursor}` : ''}`)
        expect(page.statusCode, page.body).toBe(200)
        walked.push(...page.json().data.map((e: { id: string }) => e.id))
        cursor = page.json().next_cursor
        for (let i = 0; i < 3; i++) await add(n++)
        // A second passes now and then, as it would.
        if (n % 2) clock.now++
      } while (cursor)
      expect(walked, query).toEqual(expected)
    }
    const first = (await list('paging', '?limit=1')).json()
    expect(first.data).toHaveLength(1)
    expect(typeof first.next_cursor).toBe('string')
  })

  it('answers 404 for an unknown entry or application, another application’s entry and another workspace’s', async () => {
    await createApp('elsewhere')
    const id = (await evaluate('bot', { messages: [{ role: 'user', content: 'hello' }] })).json().id
    problem(
      await t.request({ method: 'GET', url: `/v1/applications/bot/evaluations/${id}x` }),
      404,
      'not_found',
    )
    problem(
      await t.request({ method: 'GET', url: `/v1/applications/elsewhere/evaluations/${id}` }),
      404,
      'not_found',
    )
    problem(
      await t.request({ method: 'GET', url: `/v1/applications/nope/evaluations/${id}` }),
      404,
      'not_found',
    )
    problem(await list('nope'), 404, 'not_found')
    expect((await list('elsewhere')).json()).toEqual({ data: [], next_cursor: null })

    // Another workspace with an application of the same id sees nothing of this one's log.
    const intruder = await t.key(['admin'], { workspace: 'intruder' })
    problem(
      await t.request({ method: 'GET', url: `/v1/applications/bot/evaluations/${id}`, key: intruder }),
      404,
      'not_found',
    )
    problem(await list('bot', '', intruder), 404, 'not_found')
    await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'bot', name: 'b', description: '' },
      key: intruder,
    })
    problem(
      await t.request({ method: 'GET', url: `/v1/applications/bot/evaluations/${id}`, key: intruder }),
      404,
      'not_found',
    )
    expect((await list('bot', '', intruder)).json()).toEqual({ data: [], next_cursor: null })

    // An application deleted and created again under the same id starts a log of its own.
    await createApp('reborn')
    const old = (await evaluate('reborn', { messages: [{ role: 'user', content: 'hello' }] })).json().id
    expect((await t.request({ method: 'DELETE', url: '/v1/applications/reborn' })).statusCode).toBe(204)
    problem(
      await t.request({ method: 'GET', url: `/v1/applications/reborn/evaluations/${old}` }),
      404,
      'not_found',
    )
    await createApp('reborn')
    expect((await list('reborn')).json()).toEqual({ data: [], next_cursor: null })
    problem(
      await t.request({ method: 'GET', url: `/v1/applications/reborn/evaluations/${old}` }),
      404,
      'not_found',
    )
  })

  it('logs a playground run as such when the request says so, and takes no other source from a request', async () => {
    const res = await evaluate('bot', {
      messages: [{ role: 'user', content: 'hello' }],
      source: 'playground',
    })
    expect(res.statusCode, res.body).toBe(200)
    // The answer is an evaluation like any other; the entry says what asked.
    expect(res.json()).not.toHaveProperty('source')
    const entry = await t.request({ method: 'GET', url: `/v1/applications/bot/evaluations/${res.json().id}` })
    expect(entry.json().source).toBe('playground')
    const listed = await list('bot', '?source=playground')
    expect(listed.json().data.map((e: { id: string }) => e.id)).toEqual([res.json().id])
    const nullSource = await evaluate('bot', { messages: [{ role: 'user', content: 'hello' }], source: null })
    expect(nullSource.statusCode, nullSource.body).toBe(200)
    expect((await list('bot', '?source=api&limit=1')).json().data[0].id).toBe(nullSource.json().id)
    for (const source of ['chat_input', 'chat_output', 'console', 1]) {
      const refused = problem(
        await evaluate('bot', { messages: [{ role: 'user', content: 'hello' }], source }),
        422,
        'validation_error',
      )
      expect(new Set(refused.errors?.map((e) => e.pointer))).toEqual(new Set(['/source']))
    }
  })

  it('needs evaluations:read', async () => {
    const id = (await evaluate('bot', { messages: [{ role: 'user', content: 'hello' }] })).json().id
    for (const url of ['/v1/applications/bot/evaluations', `/v1/applications/bot/evaluations/${id}`]) {
      const res = await t.request({ method: 'GET', url, key: null })
      problem(res, 401, 'unauthenticated')
      expect(res.headers['www-authenticate']).toBe('Bearer realm="warden"')
      for (const scopes of [['evaluations:write'], ['policies:read', 'applications:read']] as const) {
        const denied = problem(
          await t.request({ method: 'GET', url, key: await t.key([...scopes]) }),
          403,
          'forbidden',
        )
        expect(denied.detail).toContain('evaluations:read')
      }
      expect(
        (await t.request({ method: 'GET', url, key: await t.key(['evaluations:read']) })).statusCode,
      ).toBe(200)
    }
  })

  it('validates every query value and the entry id: 422 with a pointer, whatever the length or magnitude', async () => {
    // Long, short of the 8 KB request-target limit (beyond it: 414, before any routing).
    const long = 'x'.repeat(4000)
    const cases: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=ten', 'limit'],
      ['limit=1e3', 'limit'],
      ['limit=99999999999999999999999999', 'limit'],
      ['cursor=', 'cursor'],
      ['cursor=nonsense', 'cursor'],
      [`cursor=${long}`, 'cursor'],
      [`cursor=${Buffer.from(JSON.stringify({ v: 1, p: 50 })).toString('base64url')}`, 'cursor'],
      [
        `cursor=${Buffer.from(JSON.stringify({ v: 1, p: 'log:1:99999999999999999' })).toString('base64url')}`,
        'cursor',
      ],
      ['verdict=error', 'verdict'],
      ['verdict=', 'verdict'],
      ['source=console', 'source'],
      ['source=', 'source'],
      ['policy_id=.hidden', 'policy_id'],
      [`policy_id=${long}`, 'policy_id'],
      ['since=-1', 'since'],
      ['since=yesterday', 'since'],
      ['since=1.5', 'since'],
      ['since=99999999999999999999999999999999', 'since'],
      ['until=1e309', 'until'],
      ['until=253402300800', 'until'],
      [`until=${'9'.repeat(4000)}`, 'until'],
      ['sort=created', 'sort'],
    ]
    for (const [query, field] of cases) {
      const body = problem(await list('bot', `?${query}`), 422, 'validation_error')
      expect(
        body.errors?.map((e) => e.pointer),
        query.slice(0, 60),
      ).toEqual([`#/query/${field}`])
    }
    for (const id of ['.dot', 'x'.repeat(129), encodeURIComponent('a b')]) {
      const body = problem(
        await t.request({ method: 'GET', url: `/v1/applications/bot/evaluations/${id}` }),
        422,
        'validation_error',
      )
      expect(body.errors?.map((e) => e.pointer)).toEqual(['#/path/evaluation_id'])
    }
  })

  it('answers 503 and logs nothing when the log cannot be written: an answered evaluation is always logged', async () => {
    const write = t.store.write
    t.store.write = async () => {
      throw new StoreUnavailableError(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' }))
    }
    let res: Awaited<ReturnType<typeof evaluate>>
    try {
      res = await evaluate('bot', { messages: [{ role: 'user', content: 'unlogged words' }] })
    } finally {
      t.store.write = write
    }
    problem(res, 503, 'unavailable')
    const rows = await t.store.db.selectFrom('evaluations').select('doc').execute()
    expect(rows.some((r) => r.doc.includes('unlogged'))).toBe(false)
  })

  it('keeps no card number, API key or email of the conversation anywhere in the row by default (redacted)', async () => {
    const res = await evaluate('bot', {
      messages: [
        { role: 'user', content: `Card ${CARD}, mail ${EMAIL}, key ${OPENAI_KEY}` },
        { role: 'assistant', content: `Noted ${EMAIL}; the refund guarantee applies.` },
      ],
      context: [`Customer card on file: ${CARD}`],
      redact: true,
    })
    expect(res.statusCode, res.body).toBe(200)
    const answer = res.json()
    // The answer itself carries the findings' texts; the log must not.
    expect(JSON.stringify(answer)).toContain(CARD)
    const texts = await rawLogTexts(t, answer.id)
    for (const secret of [CARD, CARD_DIGITS, EMAIL, OPENAI_KEY, 'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z'])
      for (const text of texts) expect(text.replaceAll(' ', '')).not.toContain(secret.replaceAll(' ', ''))
    const logged = (
      await t.request({ method: 'GET', url: `/v1/applications/bot/evaluations/${answer.id}` })
    ).json()
    expect(logged.messages).toEqual([
      { role: 'user', content: 'Card [CREDIT_CARD], mail [EMAIL], key [API_KEY]' },
      { role: 'assistant', content: 'Noted [EMAIL]; the [KEYWORD] applies.' },
    ])
    expect(logged.context).toEqual(['Customer card on file: [CREDIT_CARD]'])
    // The texts the log keeps are the answer's `redacted`, word for word.
    expect({ messages: logged.messages, context: logged.context }).toEqual(answer.redacted)
    // Keyword findings of a monitor policy are redacted too; their offsets stay.
    const tone = logged.policies.find((p: { id: string }) => p.id === 'tone')
    expect(tone.rules[0].findings).toEqual([
      { kind: 'keyword', source: 'messages', index: 1, start: 33, end: 49, text: '[KEYWORD]' },
    ])
    expect(logged).not.toHaveProperty('redacted')
  })
})

describe.each(
  STORE_KINDS,
)('the evaluation log of a store logged before sources were a column (%s)', (kind) => {
  it('lists its entries by the source their stored text names, once migrated', async () => {
    const fresh = await freshStoreConfig(kind)
    try {
      const old = openStore(fresh.config)
      await migrateTo(old, '0008_policy_tests')
      await old.db.insertInto('workspaces').values({ id: 'ws-1', name: 'default', created: 1 }).execute()
      await old.db
        .insertInto('applications')
        .values({
          workspace_id: 'ws-1',
          id: 'legacy',
          name: 'Legacy',
          description: '',
          etag: 'e',
          created: 1,
          updated: 1,
          doc: '{"id":"legacy","name":"Legacy","description":"","provider":null,"model":null,"parameters":null,"created":1,"updated":1}',
        })
        .execute()
      const { seq } = await old.db
        .selectFrom('applications')
        .select('seq')
        .where('id', '=', 'legacy')
        .executeTakeFirstOrThrow()
      // Entries as the previous version wrote them: no source column, the source in the text.
      // Recent ones: retention, which runs from the app's start, keeps them.
      const now = Math.floor(Date.now() / 1000)
      const db = old.db.withTables<{ evaluations: Record<string, unknown> }>()
      for (const [i, source] of ['api', 'chat_input', 'chat_output', 'api'].entries())
        await db
          .insertInto('evaluations')
          .values({
            id: `ev-${i}`,
            app_seq: seq,
            created: now - 10 + i,
            verdict: 'pass',
            doc: JSON.stringify({ id: `ev-${i}`, source, verdict: 'pass' }),
          })
          .execute()
      await old.close()

      const store = openStore(fresh.config)
      expect((await prepareStore(store)).migrations).toEqual(['0009_evaluation_source'])
      const config = { ...loadConfig({}), store: fresh.config }
      const services = createServices({ store, config })
      const app = await buildApp({ config, store, services })
      try {
        const { secret } = await services.operator.createKey({
          workspaceId: 'ws-1',
          name: null,
          scopes: ['admin'],
          expiresAt: null,
        })
        const ids = async (source: string) =>
          (
            await app.inject({
              url: `/v1/applications/legacy/evaluations?source=${source}`,
              headers: { authorization: `Bearer ${secret}` },
            })
          )
            .json()
            .data.map((e: { id: string }) => e.id)
        expect(await ids('api')).toEqual(['ev-3', 'ev-0'])
        expect(await ids('chat_output')).toEqual(['ev-2'])
        expect(await ids('playground')).toEqual([])
      } finally {
        await app.close()
        await store.close()
      }
    } finally {
      await fresh.drop()
    }
  })
})

describe('a redacted log entry', () => {
  it('keeps out a found text past a rule’s reported findings, from the texts and from a judge’s reason', async () => {
    // More emails than a rule reports, then a card number: found, but past the cap.
    const emails = Array.from({ length: MAX_REPORTED_FINDINGS + 5 }, (_, i) => `u${i}@example.com`).join(' ')
    const text = `${emails} card ${CARD}`
    const judge: Judge = {
      model: 'fake',
      score: async () => ({ score: 0.9, reason: `It mentions ${CARD} and u7@example.com.` }),
    }
    const outcome = await evaluatePolicies(
      [
        compilePolicy(
          {
            id: 'guard',
            revision: 1,
            draft: false,
            rules: [
              { type: 'pii', expected: 'pass', value: null, threshold: null, flagged: null },
              { type: 'custom', expected: 'pass', value: null, threshold: null, flagged: null },
            ],
            target: ['input'],
            definition: 'Is the text polite?',
            override_response: null,
            mode: 'enforce',
            on_error: 'fail_closed',
          },
          shippedClassifiers(),
        ),
      ],
      { messages: [{ role: 'user', content: text }], context: null },
      { judge, workspace: 'w' },
    )
    const [pii, custom] = outcome.policies[0]?.rules ?? []
    expect(pii?.findings).toHaveLength(MAX_REPORTED_FINDINGS)
    expect(JSON.stringify(pii?.findings)).not.toContain(CARD)
    expect(custom?.reason).toContain(CARD)
    const answer = {
      id: '0193c1c0-0000-7000-8000-000000000000',
      application_id: 'bot',
      created: 1_800_000_000,
      latency_ms: 1,
      ...outcome,
    }
    const entry = logEntry(
      {
        caller: { workspaceId: 'w', keyId: 'k', requestId: 'r' },
        appSeq: 1,
        source: 'api',
        conversation: { messages: [{ role: 'user', content: text }], context: null },
        outcome,
        answer,
      },
      'redacted',
    )
    const kept = JSON.stringify(entry)
    expect(kept.includes(CARD), 'the card number is in the entry').toBe(false)
    expect(kept.includes('u7@example.com'), 'an email is in the entry').toBe(false)
    expect(entry.policies[0]?.rules[1]?.reason).toBe('It mentions [CREDIT_CARD] and [EMAIL].')
    expect(entry.messages?.[0]?.content.endsWith('card [CREDIT_CARD]')).toBe(true)
  })
})

describe.each(STORE_KINDS)('EVALUATION_LOG_CONTENT (%s)', (kind) => {
  const conversation = {
    messages: [
      { role: 'user', content: `Zanzibar card ${CARD}, mail ${EMAIL}` },
      { role: 'assistant', content: 'Quixotic reply with the refund guarantee.' },
    ],
    context: ['Xylophone context document.'],
  }
  const setUp = async (content: string) => {
    const t = await createTestApp(kind, { EVALUATION_LOG_CONTENT: content })
    await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'bot', name: 'b', description: '' },
    })
    await t.request({
      method: 'POST',
      url: '/v1/applications/bot/policies',
      payload: {
        id: 'guard',
        rules: [{ type: 'pii' }, { type: 'keywords', flagged: ['refund guarantee'] }, { type: 'toxicity' }],
        target: ['input', 'output', 'context'],
      },
    })
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications/bot/evaluations',
      payload: conversation,
    })
    expect(res.statusCode, res.body).toBe(200)
    return { t, answer: res.json() }
  }

  it('none: no text of the conversation at all, and no finding’s text', async () => {
    const { t, answer } = await setUp('none')
    try {
      const texts = await rawLogTexts(t, answer.id)
      for (const word of ['Zanzibar', 'Quixotic', 'Xylophone', 'refund', CARD, EMAIL])
        for (const text of texts) expect(text).not.toContain(word)
      const logged = (
        await t.request({ method: 'GET', url: `/v1/applications/bot/evaluations/${answer.id}` })
      ).json()
      expect(logged).toMatchObject({
        content: 'none',
        messages: null,
        context: null,
        verdict: answer.verdict,
      })
      const findings = logged.policies[0].rules.flatMap((r: { findings: unknown[] }) => r.findings)
      expect(findings.length).toBeGreaterThan(2)
      for (const finding of findings) expect(finding.text).toBeNull()
      // Offsets stay: where things were found is not what was found.
      expect(findings.map((f: { start: number }) => f.start)).toEqual(
        answer.policies[0].rules.flatMap((r: { findings: { start: number }[] }) =>
          r.findings.map((f) => f.start),
        ),
      )
    } finally {
      await t.close()
    }
  })

  it('full: every text as evaluated', async () => {
    const { t, answer } = await setUp('full')
    try {
      const logged = (
        await t.request({ method: 'GET', url: `/v1/applications/bot/evaluations/${answer.id}` })
      ).json()
      expect(logged).toMatchObject({
        content: 'full',
        messages: conversation.messages,
        context: conversation.context,
        policies: answer.policies,
      })
      const texts = (await rawLogTexts(t, answer.id)).join('\n')
      for (const word of ['Zanzibar', 'Quixotic', 'Xylophone', CARD, EMAIL]) expect(texts).toContain(word)
    } finally {
      await t.close()
    }
  })
})

describe.each(STORE_KINDS)('evaluation log retention (%s)', (kind) => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp(kind)
    for (const id of ['old', 'new']) {
      await t.request({ method: 'POST', url: '/v1/applications', payload: { id, name: id, description: '' } })
      await t.request({
        method: 'POST',
        url: `/v1/applications/${id}/policies`,
        payload: { id: 'p', rules: [{ type: 'keywords', flagged: ['x'] }], target: ['input'] },
      })
    }
  })
  afterAll(async () => t.close())

  it('deletes the entries older than EVALUATION_RETENTION_DAYS, in small batches, serving requests between them', async () => {
    const day = 86_400
    // The app's own evaluations below are stamped by the machine's clock: start from it.
    const now = Math.floor(Date.now() / 1000)
    const clock = manualClock(now)
    const log = new EvaluationLogService({ store: t.store, clock, content: 'redacted', retentionDays: 30 })
    const evaluations = new EvaluationsService({
      store: t.store,
      evaluator: new Evaluator({ clock, judge: null, classifiers: shippedClassifiers(), poolMinMs: 0 }),
      log,
      maxWork: loadConfig({}).evaluationMaxWork,
    })
    const ages = [45, 40, 31, -400, 31, 30.5, 30, 29, 2, 0]
    const kept: string[] = []
    for (const [i, age] of ages.entries()) {
      // One entry from a clock far ahead among the old ones: it must not hold back what follows it.
      clock.now = now - Math.round(age * day) - 1
      const application = i % 2 ? 'old' : 'new'
      const answer = await evaluations.evaluate(
        { workspaceId: t.workspaceId, keyId: 'k', requestId: `r${i}` },
        application,
        { messages: [{ role: 'user', content: 'x' }] },
      )
      if (age < 30) kept.push(answer.id)
    }
    clock.now = now
    let pauses = 0
    const deleted = await log.purgeExpired({
      batchSize: 2,
      pause: async () => {
        pauses++
        // Between two batches the store serves requests: a read and a logged evaluation.
        expect((await t.request({ method: 'GET', url: '/v1/applications/old/evaluations' })).statusCode).toBe(
          200,
        )
        const res = await t.request({
          method: 'POST',
          url: '/v1/applications/new/evaluations',
          payload: { messages: [{ role: 'user', content: 'between batches' }] },
        })
        expect(res.statusCode, res.body).toBe(200)
        kept.push(res.json().id)
      },
    })
    expect(deleted).toBe(6)
    // Windows of two in write order: [45, 40], [31, ahead], [31, 30.5], [30, 29], then [2, 0] has nothing.
    expect(pauses).toBe(4)
    const left = await t.store.db.selectFrom('evaluations').select(['id', 'seq']).execute()
    expect(left.map((r) => r.id).sort()).toEqual([...kept].sort())
    const policyRows = await t.store.db.selectFrom('evaluation_policies').select('seq').execute()
    expect(policyRows.map((r) => r.seq).sort()).toEqual(left.map((r) => r.seq).sort())
    // Nothing more to do: a second pass deletes nothing and stops at once.
    expect(await log.purgeExpired({ pause: async () => expect.fail('no batch to pause after') })).toBe(0)
  })

  it('keeps entries EVALUATION_RETENTION_DAYS days, as configured', async () => {
    const configured = await createTestApp(kind, { EVALUATION_RETENTION_DAYS: '2' })
    try {
      await configured.request({
        method: 'POST',
        url: '/v1/applications',
        payload: { id: 'bot', name: 'bot', description: '' },
      })
      const now = Math.floor(Date.now() / 1000)
      const clock = manualClock(now)
      const log = new EvaluationLogService({
        store: configured.store,
        clock,
        content: 'redacted',
        retentionDays: 30,
      })
      const evaluations = new EvaluationsService({
        store: configured.store,
        evaluator: new Evaluator({ clock, judge: null, classifiers: shippedClassifiers(), poolMinMs: 0 }),
        log,
        maxWork: loadConfig({}).evaluationMaxWork,
      })
      const ids: string[] = []
      for (const days of [3, 2.5, 1.5, 0]) {
        clock.now = now - days * 86_400
        const answer = await evaluations.evaluate(
          { workspaceId: configured.workspaceId, keyId: 'k', requestId: `r${days}` },
          'bot',
          { messages: [{ role: 'user', content: 'x' }] },
        )
        ids.push(answer.id)
      }
      // The app's own log service, as configured: two days, not the default thirty.
      expect(await configured.services.evaluationLog.purgeExpired({ pause: async () => {} })).toBe(2)
      const left = await configured.store.db.selectFrom('evaluations').select('id').orderBy('seq').execute()
      expect(left.map((r) => r.id)).toEqual(ids.slice(2))
    } finally {
      await configured.close()
    }
  })

  it('runs from start-up until the app closes', async () => {
    const clock = manualClock(Math.floor(Date.now() / 1000) + 2 * 86_400)
    const log = new EvaluationLogService({ store: t.store, clock, content: 'redacted', retentionDays: 1 })
    let failures = 0
    log.startRetention(() => failures++)
    await log.stopRetention()
    expect(failures).toBe(0)
    // The batch under way finished: every entry above went but the one from a clock far ahead.
    const left = await t.store.db.selectFrom('evaluations').select('created').execute()
    expect(left).toHaveLength(1)
    expect(left[0]?.created).toBeGreaterThan(clock.now + 300 * 86_400)
  })
})
