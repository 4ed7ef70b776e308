import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'

/** A user turn with text and one image of `bytes` bytes of base64, as OpenAI's SDKs send it. */
const withImage = (bytes: number, text = 'What is in this picture?') => ({
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(bytes)}` } },
      ],
    },
  ],
})

/** `count` content parts of `bytes` bytes each (a `text` part's text padded). */
const parts = (count: number, bytes = 24) =>
  Array.from({ length: count }, () => JSON.stringify({ type: 'x', text: 'p'.repeat(bytes - 24) })).join(',')

describe('body limits per route', () => {
  it('defaults to 1 MiB, and 20 MiB for evaluations and chat completions; each is configurable', () => {
    expect(loadConfig({})).toMatchObject({
      bodyLimit: 1_048_576,
      bodyLimits: { evaluations: 20_971_520, chatCompletions: 20_971_520 },
    })
    expect(
      loadConfig({
        BODY_LIMIT_BYTES: '2048',
        EVALUATIONS_BODY_LIMIT_BYTES: '4096',
        CHAT_COMPLETIONS_BODY_LIMIT_BYTES: '8192',
        WORKSPACE_BODY_BUDGET_BYTES: '8192',
      }),
    ).toMatchObject({ bodyLimit: 2048, bodyLimits: { evaluations: 4096, chatCompletions: 8192 } })
    expect(() => loadConfig({ BODY_LIMIT_BYTES: '10' })).toThrow(/BODY_LIMIT_BYTES must be between/)
    expect(() => loadConfig({ CHAT_COMPLETIONS_BODY_LIMIT_BYTES: '1MB' })).toThrow(/whole number/)
  })

  it('budgets 64 MiB of bodies in flight per workspace and 256 MiB in all, never less than the largest body', () => {
    expect(loadConfig({}).bodyBudget).toEqual({ workspace: 64 * 1_048_576, total: 256 * 1_048_576 })
    expect(
      loadConfig({ WORKSPACE_BODY_BUDGET_BYTES: '33554432', BODY_BUDGET_BYTES: '67108864' }).bodyBudget,
    ).toEqual({ workspace: 33_554_432, total: 67_108_864 })
    // Unset, each holds at least the largest body a route takes.
    expect(loadConfig({ EVALUATIONS_BODY_LIMIT_BYTES: String(100 * 1_048_576) }).bodyBudget).toEqual({
      workspace: 100 * 1_048_576,
      total: 256 * 1_048_576,
    })
    expect(() => loadConfig({ WORKSPACE_BODY_BUDGET_BYTES: '1048576' })).toThrow(
      'WORKSPACE_BODY_BUDGET_BYTES must be at least the largest body limit (20971520 bytes), got 1048576',
    )
    expect(() => loadConfig({ BODY_BUDGET_BYTES: '33554432' })).toThrow(
      'BODY_BUDGET_BYTES must be at least WORKSPACE_BODY_BUDGET_BYTES (67108864 bytes), got 33554432',
    )
  })

  describe.each(STORE_KINDS)('on the routes (%s)', (kind) => {
    let t: TestApp
    beforeAll(async () => {
      t = await createTestApp(kind, {
        EVALUATIONS_BODY_LIMIT_BYTES: String(3 * 1_048_576),
        CHAT_COMPLETIONS_BODY_LIMIT_BYTES: String(2 * 1_048_576),
      })
      await t.request({
        method: 'POST',
        url: '/v1/applications',
        payload: { id: 'bot', name: 'bot', description: '' },
      })
    })
    afterAll(async () => t.close())

    it('evaluates a conversation with a 1.5 MB image, reading its text and naming the image as not read', async () => {
      await t.request({
        method: 'POST',
        url: '/v1/applications/bot/policies',
        payload: { id: 'short', rules: [{ type: 'length', value: '100' }], target: ['input'] },
      })
      const res = await t.request({
        method: 'POST',
        url: '/v1/applications/bot/evaluations',
        payload: withImage(1_500_000),
      })
      expect(res.statusCode, res.body.slice(0, 500)).toBe(200)
      const body = res.json()
      expect(body.verdict).toBe('pass')
      expect(body.not_read).toEqual([{ index: 0, part: 1, type: 'image_url' }])
    })

    it('answers 413 naming the route’s own limit, and the default elsewhere', async () => {
      const over = problem(
        await t.request({
          method: 'POST',
          url: '/v1/applications/bot/evaluations',
          payload: withImage(3 * 1_048_576),
        }),
        413,
        'payload_too_large',
      )
      expect(over.detail).toBe("The request body is larger than this route's limit of 3 MiB (3145728 bytes)")
      const chat = problem(
        await t.request({
          method: 'POST',
          url: '/v1/applications/bot/chat/completions',
          payload: withImage(2 * 1_048_576),
        }),
        413,
        'payload_too_large',
      )
      expect(chat.detail).toBe("The request body is larger than this route's limit of 2 MiB (2097152 bytes)")
      const policy = problem(
        await t.request({
          method: 'POST',
          url: '/v1/applications/bot/policies',
          payload: {
            id: 'big',
            rules: [{ type: 'keywords', flagged: ['x'.repeat(1_100_000)] }],
            target: ['input'],
          },
        }),
        413,
        'payload_too_large',
      )
      expect(policy.detail).toBe(
        "The request body is larger than this route's limit of 1 MiB (1048576 bytes)",
      )
    })

    it('parses a body of 1 MiB or more apart, with the answers of any other: the value, bad JSON, a __proto__ key', async () => {
      const post = (payload: string) =>
        t.request({
          method: 'POST',
          url: '/v1/applications/bot/evaluations',
          headers: { 'content-type': 'application/json' },
          payload,
        })
      const large = (body: object) => {
        const text = JSON.stringify(body)
        return text.replace('"pad"', `"${'p'.repeat(1_100_000)}"`)
      }
      const ok = await post(
        large({
          messages: [
            { role: 'system', content: 'pad' },
            { role: 'user', content: 'My card is 4111 1111 1111 1111, ☎ «ok»' },
          ],
          policies: [],
        }),
      )
      expect(ok.statusCode, ok.body.slice(0, 300)).toBe(200)
      const bad = problem(
        await post(`${large({ messages: [{ role: 'user', content: 'pad' }] })},`),
        400,
        'malformed_request',
      )
      const small = problem(await post('{"messages": [],'), 400, 'malformed_request')
      expect(bad.detail).toBe(small.detail)
      for (const poisoned of [
        large({ messages: [{ role: 'user', content: 'pad' }] }).replace('{', '{"__proto__":{"admin":true},'),
        large({ messages: [{ role: 'user', content: 'pad' }] }).replace(
          '{',
          '{"constructor":{"prototype":{"a":1}},',
        ),
      ])
        expect(problem(await post(poisoned), 400, 'malformed_request').detail).toBe(small.detail)
      expect(t.app.bodyBudget.held()).toBe(0)
    })

    it('answers 400 for a body shorter than its Content-Length, small or large', async () => {
      for (const declared of [4096, 2 * 1_048_576]) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/applications/bot/evaluations',
          headers: {
            authorization: `Bearer ${t.adminKey}`,
            'content-type': 'application/json',
            'content-length': String(declared),
          },
          payload: Readable.from([Buffer.from('{"messages":[{"role":"user","content":"hi"}]}')]),
        })
        expect(problem(res, 400, 'malformed_request').detail).toBe(
          'The Content-Length header does not match the body',
        )
      }
      expect(t.app.bodyBudget.held()).toBe(0)
    })

    it('refuses a large body at its array past the schema’s limit while the rest of it is still to come', async () => {
      // 2 MiB declared; only the head is ever sent: 10,001 parts, one too many.
      const body = new Readable({ read() {} })
      body.push(`{"messages":[{"role":"user","content":"hi"},{"role":"user","content":[${parts(10_001, 30)}]`)
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/applications/bot/evaluations',
        headers: {
          authorization: `Bearer ${t.adminKey}`,
          'content-type': 'application/json',
          'content-length': String(2 * 1_048_576),
        },
        payload: body,
      })
      const refused = problem(res, 422, 'validation_error')
      expect(refused.errors).toEqual([
        { pointer: '/messages/1/content', detail: 'must have at most 10000 items' },
      ])
      body.destroy()
      expect(t.app.bodyBudget.held()).toBe(0)
    })

    it('lists every problem of a small body, and the array that refused a large one', async () => {
      const head = `{"messages":[{"role":"user","content":[${parts(10_001)}]}],"policies":5`
      const small = problem(
        await t.request({
          method: 'POST',
          url: '/v1/applications/bot/evaluations',
          headers: { 'content-type': 'application/json' },
          payload: `${head}}`,
        }),
        422,
        'validation_error',
      )
      expect(small.errors?.map((e) => e.pointer).sort()).toEqual(['/messages/0/content', '/policies'])
      const large = problem(
        await t.request({
          method: 'POST',
          url: '/v1/applications/bot/evaluations',
          headers: { 'content-type': 'application/json' },
          payload: `${head},"context":{"documents":["${'d'.repeat(300_000)}"]}}`,
        }),
        422,
        'validation_error',
      )
      expect(large.errors).toEqual([
        { pointer: '/messages/0/content', detail: 'must have at most 10000 items' },
      ])
    })
  })
})
