import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { systemClock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import type { AppError } from '../../src/errors.js'
import { Evaluator } from '../../src/evaluation/evaluator.js'
import { RuleChecks } from '../../src/evaluation/rule-checks.js'
import { type Judge, JudgeError, type JudgeQuestion } from '../../src/judge/judge.js'
import { shippedClassifiers } from '../../src/models/shipped.js'
import { createServices } from '../../src/services/index.js'
import { PoliciesService } from '../../src/services/policies.service.js'
import { PolicyTestsService } from '../../src/services/policy-tests.service.js'
import { prepareStore } from '../../src/services/store-setup.js'
import { TransferService } from '../../src/services/transfer.service.js'
import { openStore } from '../../src/store/database.js'
import { findPolicy } from '../../src/store/policies.repository.js'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'
import { freshStoreConfig, STORE_KINDS } from '../helpers/stores.js'

const CARD = '4111 1111 1111 1111'
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const reply = (text: string) => [
  { role: 'user', content: 'What card did I pay with?' },
  { role: 'assistant', content: text },
]

describe.each(STORE_KINDS)('policy test cases (%s)', (kind) => {
  let t: TestApp
  const app = '/v1/applications/bot'
  const policyUrl = (policy: string) => `${app}/policies/${policy}`
  const testsUrl = (policy: string) => `${policyUrl(policy)}/tests`
  const createPolicy = async (body: Record<string, unknown>) => {
    const res = await t.request({ method: 'POST', url: `${app}/policies`, payload: body })
    expect(res.statusCode, res.body).toBe(201)
    return res
  }
  const createTest = async (policy: string, body: Record<string, unknown>, key?: string) => {
    const res = await t.request({
      method: 'POST',
      url: testsUrl(policy),
      payload: body,
      ...(key ? { key } : {}),
    })
    expect(res.statusCode, res.body).toBe(201)
    return res
  }
  const run = (policy: string, payload: unknown = {}) =>
    t.request({ method: 'POST', url: `${policyUrl(policy)}/test-runs`, payload: payload as object })
  const patchPolicy = (policy: string, payload: unknown, query = '', headers: Record<string, string> = {}) =>
    t.request({ method: 'PATCH', url: `${policyUrl(policy)}${query}`, payload: payload as object, headers })

  beforeAll(async () => {
    t = await createTestApp(kind)
    for (const id of ['bot', 'other']) {
      await t.request({ method: 'POST', url: '/v1/applications', payload: { id, name: id, description: '' } })
    }
    // A leaky policy: it looks for email addresses, not card numbers.
    await createPolicy({ id: 'leaky', rules: [{ type: 'pii', flagged: ['email'] }], target: ['output'] })
  })
  afterAll(async () => t.close())

  describe('CRUD', () => {
    it('creates a case (201, Location, ETag), shows every field, and reads it back', async () => {
      const res = await createTest('leaky', {
        id: 'card',
        name: 'A card number in the reply is caught',
        messages: reply(`It was ${CARD}.`),
        expected: { verdict: 'fail', rules: [{ index: 0, status: 'fail' }] },
      })
      expect(res.headers.location).toBe(`${testsUrl('leaky')}/card`)
      expect(res.headers.etag).toMatch(/^"[0-9a-f]{32}"$/)
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
      const body = res.json()
      expect(body).toEqual({
        id: 'card',
        application_id: 'bot',
        policy_id: 'leaky',
        name: 'A card number in the reply is caught',
        messages: reply(`It was ${CARD}.`),
        context: null,
        expected: { verdict: 'fail', rules: [{ index: 0, status: 'fail' }] },
        created: expect.any(Number),
        updated: body.created,
      })
      expect(Object.keys(body)).toEqual([
        'id',
        'application_id',
        'policy_id',
        'name',
        'messages',
        'context',
        'expected',
        'created',
        'updated',
      ])
      const read = await t.request({ method: 'GET', url: `${testsUrl('leaky')}/card` })
      expect(read.statusCode).toBe(200)
      expect(read.json()).toEqual(body)
      expect(read.headers.etag).toBe(res.headers.etag)
    })

    it('generates a UUIDv7 id when none is given, keeps text parts and context, and shows rules null when not listed', async () => {
      const res = await createTest('leaky', {
        id: null,
        name: 'parts',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
        ],
        context: ['doc'],
        expected: { verdict: 'pass' },
        created: 1,
        updated: null,
        application_id: 'ignored',
        policy_id: 'ignored',
      })
      const body = res.json()
      expect(body.id).toMatch(UUID_V7)
      expect(body).toMatchObject({
        application_id: 'bot',
        policy_id: 'leaky',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
        ],
        context: ['doc'],
        expected: { verdict: 'pass', rules: null },
      })
      expect(body.created).not.toBe(1)
      expect(res.headers.location).toBe(`${testsUrl('leaky')}/${body.id}`)
      await t.request({ method: 'DELETE', url: `${testsUrl('leaky')}/${body.id}` })
    })

    it('keeps an agent’s conversation: tool calls, tool_call_id and name, and runs it with its arguments read', async () => {
      await createPolicy({
        id: 'no-card-out',
        rules: [{ type: 'pii', flagged: ['credit_card'] }],
        target: ['output'],
      })
      const messages = [
        { role: 'user', content: 'Refund order 1042 to my card.', name: 'alice' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'lookup', arguments: '{"order": 1042}' },
              extra: { kept: true },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'Paid by card.' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_2',
              type: 'function',
              function: { name: 'refund', arguments: `{"payment": {"card": "${CARD}"}}` },
            },
          ],
        },
      ]
      // As read: content null reads as "".
      const stored = messages.map((m) => ('content' in m && m.content === null ? { ...m, content: '' } : m))
      const created = await createTest('no-card-out', {
        id: 'card-in-call',
        name: 'A card number in a tool call is caught',
        messages,
        expected: { verdict: 'fail', rules: [{ index: 0, status: 'fail' }] },
      })
      expect(created.json().messages).toEqual(stored)
      const read = await t.request({ method: 'GET', url: `${testsUrl('no-card-out')}/card-in-call` })
      expect(read.json().messages).toEqual(stored)
      expect(JSON.stringify(read.json().messages[0])).toBe(
        '{"role":"user","content":"Refund order 1042 to my card.","name":"alice"}',
      )
      const res = await run('no-card-out')
      expect(res.statusCode, res.body).toBe(200)
      const [result] = res.json().results
      expect(result).toMatchObject({ test_id: 'card-in-call', outcome: 'passed' })
      expect(result.evaluation.policies[0].rules[0].findings).toEqual([
        {
          kind: 'credit_card',
          source: 'messages',
          index: 3,
          tool_call: 0,
          path: '/payment/card',
          start: 22,
          end: 41,
          text: CARD,
        },
      ])
    })

    it('lists cases in creation order, a page at a time', async () => {
      await createPolicy({ id: 'paged', rules: [{ type: 'length', value: '10' }], target: ['input'] })
      for (const id of ['c', 'a', 'b']) {
        await createTest('paged', { id, name: id, messages: reply('x'), expected: { verdict: 'pass' } })
      }
      const first = await t.request({ method: 'GET', url: `${testsUrl('paged')}?limit=2` })
      expect(first.statusCode).toBe(200)
      expect(first.headers['content-type']).toBe('application/json; charset=utf-8')
      const page = first.json()
      expect(page.data.map((c: { id: string }) => c.id)).toEqual(['c', 'a'])
      expect(page.data[0]).toMatchObject({ policy_id: 'paged', expected: { verdict: 'pass', rules: null } })
      const second = (
        await t.request({ method: 'GET', url: `${testsUrl('paged')}?limit=2&cursor=${page.next_cursor}` })
      ).json()
      expect(second).toEqual({ data: [expect.objectContaining({ id: 'b' })], next_cursor: null })
      const all = (await t.request({ method: 'GET', url: testsUrl('paged') })).json()
      expect(all.data).toHaveLength(3)
      expect(all.next_cursor).toBeNull()
      problem(
        await t.request({ method: 'GET', url: `${testsUrl('paged')}?limit=0` }),
        422,
        'validation_error',
      )
      problem(
        await t.request({ method: 'GET', url: `${testsUrl('paged')}?cursor=zzz` }),
        422,
        'validation_error',
      )
      problem(
        await t.request({ method: 'GET', url: `${testsUrl('paged')}?sort=id` }),
        422,
        'validation_error',
      )
    })

    it('says which is missing: the application, the policy or the case', async () => {
      const missing = async (url: string, what: string, method: 'GET' | 'POST' = 'GET') => {
        const res = await t.request({
          method,
          url,
          ...(method === 'POST'
            ? { payload: { name: 'x', messages: reply('x'), expected: { verdict: 'pass' } } }
            : {}),
        })
        expect(problem(res, 404, 'not_found').detail).toContain(what)
      }
      await missing('/v1/applications/none/policies/leaky/tests', 'application')
      await missing('/v1/applications/none/policies/leaky/tests', 'application', 'POST')
      await missing(testsUrl('none'), 'policy')
      await missing(testsUrl('none'), 'policy', 'POST')
      await missing(`${testsUrl('none')}/card`, 'policy')
      await missing(`${testsUrl('leaky')}/none`, 'test case')
      const runMissing = await run('none')
      expect(problem(runMissing, 404, 'not_found').detail).toContain('policy')
    })

    it('refuses a second case with the same id in a policy (409), and allows it in another policy', async () => {
      const body = { id: 'card', name: 'again', messages: reply('x'), expected: { verdict: 'pass' } }
      const res = await t.request({ method: 'POST', url: testsUrl('leaky'), payload: body })
      expect(problem(res, 409, 'conflict').detail).toContain('card')
      await createPolicy({ id: 'second', rules: [{ type: 'pii' }], target: ['output'] })
      await createTest('second', body)
    })

    it('validates a case like an evaluation request: unknown fields at any depth, roles, parts, ids', async () => {
      const base = { name: 'x', messages: reply('x'), expected: { verdict: 'pass' } }
      const cases: [Record<string, unknown>, string][] = [
        [{ ...base, extra: 1 }, '/extra'],
        [{ ...base, expected: { verdict: 'pass', treshold: 1 } }, '/expected/treshold'],
        [{ ...base, expected: { verdict: 'maybe' } }, '/expected/verdict'],
        [
          { ...base, expected: { verdict: 'pass', rules: [{ index: 0, status: 'ok' }] } },
          '/expected/rules/0/status',
        ],
        [
          { ...base, expected: { verdict: 'pass', rules: [{ index: -1, status: 'pass' }] } },
          '/expected/rules/0/index',
        ],
        [
          { ...base, expected: { verdict: 'pass', rules: [{ index: 0, status: 'pass', why: 1 }] } },
          '/expected/rules/0/why',
        ],
        [{ ...base, messages: [{ role: 'robot', content: 'x' }] }, '/messages/0/role'],
        [{ ...base, messages: [{ role: 'user', content: 'x', nme: 'n' }] }, '/messages/0/nme'],
        [{ ...base, messages: [{ role: 'user', content: 'x', name: 5 }] }, '/messages/0/name'],
        [
          {
            ...base,
            messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', function: 'f' }] }],
          },
          '/messages/0/tool_calls/0/function',
        ],
        [
          { ...base, messages: [{ role: 'user', content: [{ type: 'text', txt: 'x' }] }] },
          '/messages/0/content/0/text',
        ],
        [{ ...base, messages: [{ role: 'user', content: 7 }] }, '/messages/0/content'],
        [{ ...base, messages: [] }, '/messages'],
        [{ ...base, context: 'doc' }, '/context'],
        [{ ...base, id: '.hidden' }, '/id'],
        [{ ...base, name: '   ' }, '/name'],
        [{ ...base, created: 'now' }, '/created'],
        [{ messages: reply('x'), expected: { verdict: 'pass' } }, '/name'],
        [{ name: 'x', messages: reply('x') }, '/expected'],
      ]
      for (const [payload, pointer] of cases) {
        const res = await t.request({ method: 'POST', url: testsUrl('leaky'), payload })
        const errors = problem(res, 422, 'validation_error').errors ?? []
        expect(
          errors.map((e) => e.pointer),
          JSON.stringify(payload),
        ).toContain(pointer)
      }
      const repeated = await t.request({
        method: 'POST',
        url: testsUrl('leaky'),
        payload: {
          ...base,
          expected: {
            verdict: 'pass',
            rules: [
              { index: 0, status: 'pass' },
              { index: 0, status: 'fail' },
            ],
          },
        },
      })
      expect(problem(repeated, 422, 'validation_error').errors).toEqual([
        { pointer: '/expected/rules/1/index', detail: 'repeats rule index 0' },
      ])
    })

    it('answers 400 for a body that is not JSON, 415 for another media type', async () => {
      const url = testsUrl('leaky')
      problem(
        await t.request({
          method: 'POST',
          url,
          body: '{bad',
          headers: { 'content-type': 'application/json' },
        }),
        400,
        'malformed_request',
      )
      problem(
        await t.request({ method: 'POST', url, body: 'x', headers: { 'content-type': 'text/plain' } }),
        415,
        'unsupported_media_type',
      )
    })

    it('replays a create with the same Idempotency-Key, and refuses the key with another body', async () => {
      const body = { id: 'idem', name: 'idem', messages: reply('x'), expected: { verdict: 'pass' } }
      const headers = { 'idempotency-key': 'case-idem-1' }
      const first = await t.request({ method: 'POST', url: testsUrl('leaky'), payload: body, headers })
      expect(first.statusCode).toBe(201)
      const again = await t.request({ method: 'POST', url: testsUrl('leaky'), payload: body, headers })
      expect(again.statusCode).toBe(201)
      expect(again.headers['idempotent-replayed']).toBe('true')
      expect(again.headers.location).toBe(first.headers.location)
      expect(again.headers.etag).toBe(first.headers.etag)
      expect(again.body).toBe(first.body)
      const other = await t.request({
        method: 'POST',
        url: testsUrl('leaky'),
        payload: { ...body, name: 'other' },
        headers,
      })
      problem(other, 422, 'validation_error')
      await t.request({ method: 'DELETE', url: `${testsUrl('leaky')}/idem` })
    })

    it('merges a patch: expected merges, lists are replaced, null clears, If-Match is honoured', async () => {
      const created = await createTest('leaky', {
        id: 'patch-me',
        name: 'before',
        messages: reply('x'),
        context: ['a'],
        expected: { verdict: 'fail', rules: [{ index: 0, status: 'fail' }] },
      })
      const url = `${testsUrl('leaky')}/patch-me`
      const stale = await t.request({
        method: 'PATCH',
        url,
        payload: { name: 'after' },
        headers: { 'if-match': '"nope"' },
      })
      problem(stale, 412, 'precondition_failed')
      const res = await t.request({
        method: 'PATCH',
        url,
        payload: { name: 'after', expected: { verdict: 'pass' }, context: null, id: 'patch-me' },
        headers: { 'if-match': created.headers.etag as string },
      })
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json()).toMatchObject({
        name: 'after',
        context: null,
        expected: { verdict: 'pass', rules: [{ index: 0, status: 'fail' }] },
        messages: reply('x'),
      })
      expect(res.headers.etag).not.toBe(created.headers.etag)
      const cleared = await t.request({
        method: 'PATCH',
        url,
        payload: { expected: { rules: null }, messages: [{ role: 'user', content: 'hi' }] },
        headers: { 'content-type': 'application/merge-patch+json' },
      })
      expect(cleared.json()).toMatchObject({
        expected: { verdict: 'pass', rules: null },
        messages: [{ role: 'user', content: 'hi' }],
      })
      // The same values again change nothing, not even the ETag.
      const same = await t.request({ method: 'PATCH', url, payload: { name: 'after' } })
      expect(same.headers.etag).toBe(cleared.headers.etag)
      const read = await t.request({ method: 'GET', url })
      expect(read.json()).toEqual(cleared.json())

      for (const [payload, pointer] of [
        [{ id: 'other' }, '/id'],
        [{ name: null }, '/name'],
        [{ messages: null }, '/messages'],
        [{ expected: null }, '/expected'],
        [{ expected: { verdict: null } }, '/expected/verdict'],
        [{ typo: 1 }, '/typo'],
      ] as const) {
        const bad = await t.request({ method: 'PATCH', url, payload })
        expect((problem(bad, 422, 'validation_error').errors ?? []).map((e) => e.pointer)).toContain(pointer)
      }
      problem(
        await t.request({ method: 'PATCH', url: `${testsUrl('leaky')}/none`, payload: { name: 'x' } }),
        404,
        'not_found',
      )
    })

    it('deletes with If-Match (412 on a stale ETag), then answers 404', async () => {
      const created = await createTest('leaky', {
        id: 'delete-me',
        name: 'x',
        messages: reply('x'),
        expected: { verdict: 'pass' },
      })
      const url = `${testsUrl('leaky')}/delete-me`
      problem(
        await t.request({ method: 'DELETE', url, headers: { 'if-match': '"old"' } }),
        412,
        'precondition_failed',
      )
      const res = await t.request({
        method: 'DELETE',
        url,
        headers: { 'if-match': created.headers.etag as string },
      })
      expect(res.statusCode).toBe(204)
      expect(res.body).toBe('')
      problem(await t.request({ method: 'GET', url }), 404, 'not_found')
      problem(await t.request({ method: 'DELETE', url }), 404, 'not_found')
    })
  })

  describe('test runs', () => {
    beforeAll(async () => {
      await createPolicy({ id: 'runs', rules: [{ type: 'pii', flagged: ['email'] }], target: ['output'] })
      await createTest('runs', {
        id: 'card-blocked',
        name: 'A card number in the reply is caught',
        messages: reply(`It was ${CARD}.`),
        expected: { verdict: 'fail' },
      })
      await createTest('runs', {
        id: 'order-allowed',
        name: 'An order number is fine',
        messages: reply('Your order 1042 ships today.'),
        expected: { verdict: 'pass', rules: [{ index: 0, status: 'pass' }] },
      })
    })

    it('runs every case against the current revision: outcome, expected, actual and the evaluation', async () => {
      const res = await run('runs')
      expect(res.statusCode, res.body).toBe(200)
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
      const body = res.json()
      expect(body).toMatchObject({
        policy_id: 'runs',
        revision: 1,
        summary: { total: 2, passed: 1, failed: 1, skipped: 0 },
      })
      const [card, order] = body.results
      expect(card).toMatchObject({
        test_id: 'card-blocked',
        outcome: 'failed',
        expected: { verdict: 'fail', rules: null },
        actual: { verdict: 'pass', rules: [{ index: 0, status: 'pass' }] },
      })
      expect(card.evaluation).toMatchObject({
        application_id: 'bot',
        verdict: 'pass',
        action: 'allow',
        override_response: null,
        policies: [{ id: 'runs', revision: 1, draft: false, verdict: 'pass' }],
      })
      expect(card.evaluation.id).toMatch(UUID_V7)
      expect(card.evaluation.latency_ms).toBeGreaterThanOrEqual(0)
      expect(order).toMatchObject({
        test_id: 'order-allowed',
        outcome: 'passed',
        actual: { verdict: 'pass', rules: [{ index: 0, status: 'pass' }] },
      })
      expect(Object.keys(body)).toEqual(['policy_id', 'revision', 'summary', 'results'])
      expect(Object.keys(card)).toEqual(['test_id', 'outcome', 'expected', 'actual', 'evaluation'])
    })

    it('runs the cases against a draft body, which is validated like a create and not stored', async () => {
      const res = await run('runs', {
        draft: {
          id: 'runs',
          rules: [{ type: 'pii', flagged: ['email', 'credit_card'] }],
          target: ['output'],
          override_response: 'Sorry.',
          revision: 7,
        },
      })
      expect(res.statusCode, res.body).toBe(200)
      const body = res.json()
      expect(body).toMatchObject({ revision: null, summary: { total: 2, passed: 2, failed: 0, skipped: 0 } })
      expect(body.results[0].evaluation).toMatchObject({
        verdict: 'fail',
        action: 'override',
        override_response: 'Sorry.',
        policies: [{ id: 'runs', revision: null, draft: true, verdict: 'fail' }],
      })
      expect(body.results[0].evaluation.policies[0].rules[0].findings[0]).toMatchObject({
        kind: 'credit_card',
        text: CARD,
      })
      expect((await t.request({ method: 'GET', url: policyUrl('runs') })).json().revision).toBe(1)
      expect((await run('runs', { draft: null })).json().revision).toBe(1)

      const invalidDraft = await run('runs', {
        draft: { id: 'runs', rules: [{ type: 'regex' }], target: ['output'] },
      })
      expect(problem(invalidDraft, 422, 'validation_error').errors?.[0]?.pointer).toBe('/draft/rules/0/value')
      const otherId = await run('runs', {
        draft: { id: 'else', rules: [{ type: 'pii' }], target: ['output'] },
      })
      expect(problem(otherId, 422, 'validation_error').errors).toEqual([
        { pointer: '/draft/id', detail: expect.stringContaining('runs') },
      ])
      const typo = await run('runs', {
        draft: { id: 'runs', rules: [{ type: 'pii', treshold: 1 }], target: ['output'] },
      })
      expect(problem(typo, 422, 'validation_error').errors?.[0]?.pointer).toBe('/draft/rules/0/treshold')
      expect(problem(await run('runs', { drafts: [] }), 422, 'validation_error').errors?.[0]?.pointer).toBe(
        '/drafts',
      )
    })

    it('answers an empty run for a policy without cases', async () => {
      await createPolicy({ id: 'no-cases', rules: [{ type: 'pii' }], target: ['output'] })
      expect((await run('no-cases')).json()).toEqual({
        policy_id: 'no-cases',
        revision: 1,
        summary: { total: 0, passed: 0, failed: 0, skipped: 0 },
        results: [],
      })
    })

    it('skips, never fails, a case that needs a judge while none is configured', async () => {
      await createPolicy({
        id: 'judged',
        rules: [{ type: 'custom' }, { type: 'pii', flagged: ['credit_card'] }],
        target: ['output'],
        definition: 'Never reveal payment details.',
      })
      await createTest('judged', {
        id: 'needs-judge',
        name: 'the custom rule must fail',
        messages: reply('It was a Visa.'),
        expected: { verdict: 'fail', rules: [{ index: 0, status: 'fail' }] },
      })
      await createTest('judged', {
        id: 'verdict-only',
        name: 'clean reply passes',
        messages: reply('I cannot tell you that.'),
        expected: { verdict: 'pass' },
      })
      await createTest('judged', {
        id: 'detector-decides',
        name: 'a card fails whatever the judge says',
        messages: reply(`It was ${CARD}.`),
        expected: { verdict: 'fail', rules: [{ index: 1, status: 'fail' }] },
      })
      await createTest('judged', {
        id: 'detector-wrong',
        name: 'a wrong expectation of a detector fails',
        messages: reply(`It was ${CARD}.`),
        expected: { verdict: 'fail', rules: [{ index: 1, status: 'pass' }] },
      })
      const body = (await run('judged')).json()
      expect(body.summary).toEqual({ total: 4, passed: 1, failed: 1, skipped: 2 })
      expect(body.results.map((r: { outcome: string }) => r.outcome)).toEqual([
        'skipped',
        'skipped',
        'passed',
        'failed',
      ])
      expect(body.results[0].actual).toEqual({
        verdict: 'fail',
        rules: [
          { index: 0, status: 'error' },
          { index: 1, status: 'pass' },
        ],
      })
      expect(body.results[0].evaluation.policies[0].rules[0].reason).toBe('no judge configured')
      // Skipped cases never refuse a change.
      await t.request({ method: 'DELETE', url: `${testsUrl('judged')}/detector-wrong` })
      const res = await patchPolicy('judged', { override_response: 'No.' })
      expect(res.statusCode, res.body).toBe(200)
    })

    it('judges a monitoring policy as if it enforced, and an error by on_error', async () => {
      await createPolicy({
        id: 'watching',
        rules: [{ type: 'pii', flagged: ['credit_card'] }],
        target: ['output'],
        mode: 'monitor',
      })
      await createTest('watching', {
        id: 'card',
        name: 'card',
        messages: reply(`It was ${CARD}.`),
        expected: { verdict: 'fail' },
      })
      const body = (await run('watching')).json()
      expect(body.results[0]).toMatchObject({ outcome: 'passed', actual: { verdict: 'fail' } })
      // The evaluation itself is what section 8 answers: a monitoring policy never blocks.
      expect(body.results[0].evaluation).toMatchObject({ verdict: 'pass', action: 'allow' })
    })
  })

  describe('a PATCH runs the tests first', () => {
    it('walks the workflow: a leaky policy, a case it fails, changes refused until one is right', async () => {
      await createPolicy({
        id: 'guard',
        rules: [{ type: 'pii', flagged: ['email'] }],
        target: ['output'],
        override_response: 'Sorry, I cannot share that.',
      })
      await createTest('guard', {
        id: 'order-allowed',
        name: 'An order number is fine',
        messages: reply('Your order 1042 ships today.'),
        expected: { verdict: 'pass' },
      })
      // The leaky policy lets a card through: the new case fails from the start.
      await createTest('guard', {
        id: 'card-blocked',
        name: 'A card number in the reply is caught',
        messages: reply(`It was ${CARD}.`),
        expected: { verdict: 'fail', rules: [{ index: 0, status: 'fail' }] },
      })
      const before = (await run('guard')).json()
      expect(before.summary).toMatchObject({ passed: 1, failed: 1 })

      // Cards caught, but too broad: any run of four digits. The card case passes, the order case breaks.
      const broad = await patchPolicy('guard', {
        rules: [
          { type: 'pii', flagged: ['email', 'credit_card'] },
          { type: 'regex', value: '[0-9]{4}' },
        ],
      })
      const refused = problem(broad, 409, 'tests_failed') as ReturnType<typeof problem> & {
        failures: { test_id: string; outcome: string; actual: unknown; evaluation: unknown }[]
      }
      expect(refused.type).toBe('/problems/tests-failed')
      expect(refused.title).toBe('Policy tests failed')
      expect(refused.detail).toContain('1 of')
      expect(refused.failures).toHaveLength(1)
      expect(refused.failures[0]).toMatchObject({
        test_id: 'order-allowed',
        outcome: 'failed',
        expected: { verdict: 'pass', rules: null },
        actual: {
          verdict: 'fail',
          rules: [
            { index: 0, status: 'pass' },
            { index: 1, status: 'fail' },
          ],
        },
        evaluation: {
          verdict: 'fail',
          action: 'override',
          policies: [{ id: 'guard', revision: null, draft: true }],
        },
      })
      // Nothing changed.
      const unchanged = (await t.request({ method: 'GET', url: policyUrl('guard') })).json()
      expect(unchanged.revision).toBe(1)

      // Still leaky on cards: refused with the card case.
      const email = problem(
        await patchPolicy('guard', { rules: [{ type: 'pii', flagged: ['email', 'phone'] }] }),
        409,
        'tests_failed',
      ) as unknown as { failures: { test_id: string }[] }
      expect(email.failures.map((f) => f.test_id)).toEqual(['card-blocked'])

      // Right: cards caught, order numbers not.
      const right = await patchPolicy('guard', {
        rules: [{ type: 'pii', flagged: ['email', 'credit_card'] }],
      })
      expect(right.statusCode, right.body).toBe(200)
      expect(right.json().revision).toBe(2)
      expect((await run('guard')).json().summary).toMatchObject({ total: 2, passed: 2, failed: 0 })
    })

    it('skips the tests with ?skip_tests=true, runs them with false, and accepts nothing else', async () => {
      const breaking = { rules: [{ type: 'regex', value: '[0-9]{4}' }] }
      problem(await patchPolicy('guard', breaking, '?skip_tests=false'), 409, 'tests_failed')
      for (const value of ['1', 'yes', '', 'TRUE ']) {
        const res = await patchPolicy('guard', breaking, `?skip_tests=${encodeURIComponent(value)}`)
        expect(problem(res, 422, 'validation_error').errors?.[0]?.pointer, value).toBe('#/query/skip_tests')
      }
      problem(await patchPolicy('guard', breaking, '?skip=true'), 422, 'validation_error')
      const forced = await patchPolicy('guard', breaking, '?skip_tests=true')
      expect(forced.statusCode, forced.body).toBe(200)
      expect(forced.json().revision).toBe(3)
      // Now the order case fails against the current revision.
      expect((await run('guard')).json().summary).toMatchObject({ passed: 1, failed: 1 })
      // A change that repairs it is let through.
      const repaired = await patchPolicy('guard', { rules: [{ type: 'pii', flagged: ['credit_card'] }] })
      expect(repaired.statusCode, repaired.body).toBe(200)
    })

    it('still validates first (422), checks If-Match (412), and lets a no-op through', async () => {
      const current = await t.request({ method: 'GET', url: policyUrl('guard') })
      problem(await patchPolicy('guard', { rules: [{ type: 'regex' }] }), 422, 'validation_error')
      problem(
        await patchPolicy('guard', { mode: 'monitor' }, '', { 'if-match': '"stale"' }),
        412,
        'precondition_failed',
      )
      const same = await patchPolicy('guard', { target: ['output'] }, '', {
        'if-match': current.headers.etag as string,
      })
      expect(same.statusCode).toBe(200)
      expect(same.headers.etag).toBe(current.headers.etag)
      problem(await patchPolicy('nothing', { mode: 'monitor' }), 404, 'not_found')
    })
  })

  describe('with a judge', () => {
    /** A judge that answers `score` and, the first time it is asked, lets `meanwhile` run first. */
    const judgeWith = (score: number, meanwhile?: () => Promise<void>) => {
      let calls = 0
      const judge: Judge = {
        model: 'test-judge',
        async score(_question: JudgeQuestion) {
          calls++
          if (calls === 1 && meanwhile) await meanwhile()
          return { score, reason: 'judged' }
        },
      }
      return { judge, calls: () => calls }
    }
    const servicesWith = (judge: Judge) => {
      const checks = new RuleChecks({ pool: null })
      const evaluator = new Evaluator({
        clock: systemClock,
        judge,
        classifiers: shippedClassifiers(),
        poolMinMs: loadConfig({}).evaluationPoolMinMs,
      })
      const tests = new PolicyTestsService({ store: t.store, clock: systemClock, evaluator, checks })
      return {
        tests,
        evaluator,
        policies: new PoliciesService({ store: t.store, clock: systemClock, checks, tests }),
      }
    }

    beforeAll(async () => {
      await createPolicy({
        id: 'custom',
        rules: [{ type: 'custom', threshold: 0.5 }],
        target: ['output'],
        definition: 'Never reveal payment details.',
      })
      await createTest('custom', {
        id: 'visa',
        name: 'naming the card brand is a leak',
        messages: reply('It was a Visa.'),
        expected: { verdict: 'fail', rules: [{ index: 0, status: 'fail' }] },
      })
    })

    it('passes or fails judged cases by the judge’s score', async () => {
      const key = { workspaceId: t.workspaceId, applicationId: 'bot', policyId: 'custom' }
      const low = servicesWith(judgeWith(0.1).judge)
      const caught = await low.tests.run(key.workspaceId, 'bot', 'custom', {})
      expect(caught.summary).toEqual({ total: 1, passed: 1, failed: 0, skipped: 0 })
      const high = servicesWith(judgeWith(0.9).judge)
      const passing = await high.tests.run(key.workspaceId, 'bot', 'custom', {})
      expect(passing.results[0]).toMatchObject({ outcome: 'failed', actual: { verdict: 'pass' } })
      expect(passing.results[0]?.evaluation.policies[0]?.rules[0]).toMatchObject({
        method: 'judge',
        score: 0.9,
      })
    })

    it('ends its judge calls when the process stops, as evaluations do: each judged case an error at once', async () => {
      // A judge that never answers unless abandoned: without the stop, the run would never end.
      const hanging: Judge = {
        model: 'hanging-judge',
        score: (_question, { signal }) =>
          new Promise((_, reject) => {
            const abandon = () => reject(new JudgeError('judge call abandoned'))
            if (signal?.aborted) abandon()
            else signal?.addEventListener('abort', abandon, { once: true })
          }),
      }
      const stopping = servicesWith(hanging)
      const run = stopping.tests.run(t.workspaceId, 'bot', 'custom', {})
      stopping.evaluator.stop()
      const ended = await run
      expect(ended.results[0]?.evaluation.policies[0]?.rules[0]).toMatchObject({
        status: 'error',
        method: 'judge',
      })
    })

    it('evaluates the stored revision compiled once, as evaluations use it, run after run', async () => {
      const services = servicesWith(judgeWith(0.1).judge)
      await services.tests.run(t.workspaceId, 'bot', 'custom', {})
      const row = (await t.request({ method: 'GET', url: policyUrl('custom') })).json()
      const budget = services.evaluator.budget()
      // Cached under the key evaluations use: nothing of the next run's budget goes to compiling it.
      const seq = (await findPolicy(t.store.statements, t.workspaceId, 'bot', 'custom'))?.seq
      const cached = services.evaluator.cachedRevision(t.workspaceId, `${seq}:${row.revision}`, budget)
      expect(cached?.compiled).not.toBeNull()
      expect(budget.left).toBe(services.evaluator.budget().left)
    })

    it('gives a concurrent change its 412, and checks again on what is current without If-Match', async () => {
      const read = await t.request({ method: 'GET', url: policyUrl('custom') })
      const etag = read.headers.etag as string
      // While the tests of the first PATCH wait for the judge, another client changes the policy.
      const other = () =>
        t
          .request({
            method: 'PATCH',
            url: `${policyUrl('custom')}?skip_tests=true`,
            payload: { override_response: 'A' },
          })
          .then((res) => expect(res.statusCode).toBe(200))
      const racing = servicesWith(judgeWith(0.1, other).judge)
      await expect(
        racing.policies.patch(t.workspaceId, 'bot', 'custom', { override_response: 'B' }, etag),
      ).rejects.toMatchObject({ code: 'precondition_failed' })
      expect((await t.request({ method: 'GET', url: policyUrl('custom') })).json()).toMatchObject({
        override_response: 'A',
        revision: 2,
      })

      const second = judgeWith(0.1, () =>
        t
          .request({
            method: 'PATCH',
            url: `${policyUrl('custom')}?skip_tests=true`,
            payload: { override_response: 'C' },
          })
          .then((res) => expect(res.statusCode).toBe(200)),
      )
      const retried = await servicesWith(second.judge).policies.patch(
        t.workspaceId,
        'bot',
        'custom',
        { mode: 'monitor' },
        undefined,
      )
      // The tests ran again on the policy as the other client left it, and the change applied on top.
      expect(second.calls()).toBe(2)
      expect(JSON.parse(retried.json)).toMatchObject({ override_response: 'C', mode: 'monitor', revision: 4 })

      // A case added while the tests ran is checked too.
      const added = judgeWith(0.1, async () => {
        await createTest('custom', {
          id: 'late',
          name: 'added meanwhile',
          messages: reply('It was a Mastercard.'),
          expected: { verdict: 'pass' },
        })
      })
      const refused = servicesWith(added.judge).policies.patch(
        t.workspaceId,
        'bot',
        'custom',
        { mode: 'enforce' },
        undefined,
      )
      await expect(refused).rejects.toMatchObject({ code: 'tests_failed' })
      const error = (await refused.catch((e: unknown) => e)) as AppError
      expect((error.extensions?.failures as { test_id: string }[]).map((f) => f.test_id)).toEqual(['late'])
    })
  })

  describe('belongs to its policy', () => {
    it('goes with its policy, and with its application', async () => {
      await createPolicy({ id: 'doomed', rules: [{ type: 'pii' }], target: ['output'] })
      await createTest('doomed', { id: 'x', name: 'x', messages: reply('x'), expected: { verdict: 'pass' } })
      expect((await t.request({ method: 'DELETE', url: policyUrl('doomed') })).statusCode).toBe(204)
      await createPolicy({ id: 'doomed', rules: [{ type: 'pii' }], target: ['output'] })
      expect((await t.request({ method: 'GET', url: testsUrl('doomed') })).json().data).toEqual([])

      await t.request({
        method: 'POST',
        url: '/v1/applications/other/policies',
        payload: { id: 'p', rules: [{ type: 'pii' }], target: ['output'] },
      })
      const created = await t.request({
        method: 'POST',
        url: '/v1/applications/other/policies/p/tests',
        payload: { name: 'x', messages: reply('x'), expected: { verdict: 'pass' } },
      })
      expect(created.statusCode).toBe(201)
      const count = async () =>
        Number(
          (
            await t.store.db
              .selectFrom('policy_tests')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('application_id', '=', 'other')
              .executeTakeFirstOrThrow()
          ).n,
        )
      expect(await count()).toBe(1)
      expect((await t.request({ method: 'DELETE', url: '/v1/applications/other' })).statusCode).toBe(204)
      expect(await count()).toBe(0)
    })

    it('moves with export and import, and reads back the same on the new store', async () => {
      const lines: string[] = []
      await new TransferService(t.store).export((line) => {
        lines.push(line)
      })
      const cases = lines.map((line) => JSON.parse(line)).filter((record) => record.kind === 'policy_test')
      expect(cases.length).toBeGreaterThan(5)
      expect(cases[0]).not.toHaveProperty('seq')
      const fresh = await freshStoreConfig(kind)
      const store = openStore(fresh.config)
      try {
        await prepareStore(store)
        const counts = await new TransferService(store).import(
          (async function* () {
            yield* lines
          })(),
        )
        expect(counts.policy_test).toBe(cases.length)
        const config = loadConfig({ RATE_LIMIT_PER_MINUTE: '0' })
        const moved = await buildApp({ config, store, services: createServices({ store, config }) })
        const get = (url: string) =>
          moved.inject({ method: 'GET', url, headers: { authorization: `Bearer ${t.adminKey}` } })
        for (const url of [testsUrl('leaky'), `${testsUrl('leaky')}/card`]) {
          const before = await t.request({ method: 'GET', url })
          const after = await get(url)
          expect(after.statusCode, url).toBe(200)
          expect(after.body, url).toBe(before.body)
          expect(after.headers.etag, url).toBe(before.headers.etag)
        }
        // Cursors name positions in the store, which an import renumbers: pages hold the same cases.
        const first = (await get(`${testsUrl('guard')}?limit=1`)).json()
        const second = (await get(`${testsUrl('guard')}?limit=1&cursor=${first.next_cursor}`)).json()
        const all = (await t.request({ method: 'GET', url: testsUrl('guard') })).json()
        expect([...first.data, ...second.data]).toEqual(all.data)
        const runAfter = await moved.inject({
          method: 'POST',
          url: `${policyUrl('guard')}/test-runs`,
          payload: {},
          headers: { authorization: `Bearer ${t.adminKey}` },
        })
        expect(runAfter.json().summary).toEqual((await run('guard')).json().summary)
        await moved.close()
      } finally {
        await store.close()
        await fresh.drop()
      }
    })

    it('is invisible to another workspace, and needs the policies scopes', async () => {
      const intruder = await t.key(['admin'], { workspace: 'intruder' })
      const url = `${testsUrl('leaky')}/card`
      for (const [method, target, payload] of [
        ['GET', testsUrl('leaky'), undefined],
        ['POST', testsUrl('leaky'), { name: 'x', messages: reply('x'), expected: { verdict: 'pass' } }],
        ['GET', url, undefined],
        ['PATCH', url, { name: 'x' }],
        ['DELETE', url, undefined],
        ['POST', `${policyUrl('leaky')}/test-runs`, {}],
      ] as const) {
        const res = await t.request({ method, url: target, payload, key: intruder })
        problem(res, 404, 'not_found')
      }
      // The intruder's own application of the same name holds nothing of ours.
      await t.request({
        method: 'POST',
        url: '/v1/applications',
        payload: { id: 'bot', name: 'theirs', description: '' },
        key: intruder,
      })
      problem(await t.request({ method: 'GET', url, key: intruder }), 404, 'not_found')
      expect((await t.request({ method: 'GET', url })).statusCode).toBe(200)

      const reader = await t.key(['policies:read'])
      expect(
        problem(
          await t.request({
            method: 'POST',
            url: testsUrl('leaky'),
            payload: { name: 'x', messages: reply('x'), expected: { verdict: 'pass' } },
            key: reader,
          }),
          403,
          'forbidden',
        ).detail,
      ).toContain('policies:write')
      expect(
        (
          await t.request({
            method: 'POST',
            url: `${policyUrl('leaky')}/test-runs`,
            payload: {},
            key: reader,
          })
        ).statusCode,
      ).toBe(200)
      const writerOnly = await t.key(['policies:write'])
      problem(await t.request({ method: 'GET', url, key: writerOnly }), 403, 'forbidden')
    })
  })
})
