import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'
import { completion, startUpstreamDouble, type UpstreamDouble } from '../helpers/upstream-double.js'

/**
 * Tool calls read as the client reads them (docs/agents.md): arguments as their decoded JSON
 * values, the function's name, and text in NFKC for the pii rule, with findings located in the
 * call as sent. Each probe is one a review sent: it passed every rule while the client's
 * JSON.parse yields the card or the address.
 */

/** A conversation whose last turn calls `name` with `args`. */
const calling = (args: string, name = 'refund') => ({
  messages: [
    { role: 'user', content: 'Refund order 1042.' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name, arguments: args } }],
    },
  ],
})

/** Every finding of the answer, with its policy's id. */
const findingsOf = (body: any) =>
  body.policies.flatMap((p: any) =>
    p.rules.flatMap((r: any) => r.findings.map((f: any) => ({ policy: p.id, ...f }))),
  )

/** The code point slice [start, end) of `text`. */
const slice = (text: string, start: number, end: number) => [...text].slice(start, end).join('')

describe.each(STORE_KINDS)('tool calls read as the client reads them (%s)', (kind) => {
  let t: TestApp
  let double: UpstreamDouble
  const evaluate = async (payload: object) => {
    const res = await t.request({ method: 'POST', url: '/v1/applications/agent/evaluations', payload })
    expect(res.statusCode, res.body).toBe(200)
    return res.json()
  }

  beforeAll(async () => {
    double = await startUpstreamDouble()
    t = await createTestApp(kind, { PROVIDER_DOUBLE_BASE_URL: double.baseUrl })
    const create = async (url: string, payload: object) => {
      const res = await t.request({ method: 'POST', url, payload })
      expect(res.statusCode, res.body).toBe(201)
    }
    await create('/v1/applications', {
      id: 'agent',
      name: 'agent',
      description: '',
      provider: 'double',
      model: 'm',
    })
    for (const policy of [
      { id: 'pii', rules: [{ type: 'pii', flagged: ['credit_card', 'email'] }] },
      { id: 'words', rules: [{ type: 'keywords', flagged: ['4111 1111 1111 1111', 'alice@example.com'] }] },
      { id: 'pattern', rules: [{ type: 'regex', value: '4111 1111 1111 1111|alice@example\\.com' }] },
      { id: 'tools', rules: [{ type: 'keywords', flagged: ['delete_everything'] }] },
    ])
      await create('/v1/applications/agent/policies', {
        ...policy,
        target: ['input', 'output'],
        override_response: 'I cannot do that.',
      })
  })
  afterAll(async () => {
    await t?.close()
    await double?.close()
  })

  it.each([
    [
      'an escaped digit',
      '{"card": "\\u0034111 1111 1111 1111"}',
      '\\u0034111 1111 1111 1111',
      '/card',
      'credit_card',
    ],
    [
      'an escaped space',
      '{"card": "4111\\u00201111 1111 1111"}',
      '4111\\u00201111 1111 1111',
      '/card',
      'credit_card',
    ],
    [
      'an escaped @',
      '{"to": {"address": "alice\\u0040example.com"}}',
      'alice\\u0040example.com',
      '/to/address',
      'email',
    ],
  ])('finds a card or address behind %s with every rule, located in the arguments as sent', async (_, args, written, path, kind) => {
    const body = await evaluate(calling(args))
    expect(body.verdict).toBe('fail')
    const start = args.indexOf(written)
    const where = {
      source: 'messages',
      index: 1,
      tool_call: 0,
      path,
      start,
      end: start + written.length,
      text: written,
    }
    expect(findingsOf(body)).toEqual([
      { policy: 'pii', kind, ...where },
      { policy: 'words', kind: 'keyword', ...where },
      { policy: 'pattern', kind: 'regex', ...where },
    ])
    // The offsets count in `arguments` as sent: the slice there is the text, and decodes to the value.
    expect(slice(args, start, start + written.length)).toBe(written)
    expect(JSON.parse(`"${written}"`)).toMatch(/^(4111 1111 1111 1111|alice@example\.com)$/)
  })

  it('finds full-width digits, and a card grouped by commas after a card word, in a message’s content', async () => {
    const fullWidth = 'カード ４１１１ １１１１ １１１１ １１１１ で'
    const commas = 'My card: 4111,1111,1111,1111, thanks'
    for (const [content, found] of [
      [fullWidth, '４１１１ １１１１ １１１１ １１１１'],
      [commas, '4111,1111,1111,1111'],
    ] as const) {
      const body = await evaluate({ messages: [{ role: 'user', content }] })
      const start = [...content].length - [...content.slice(content.indexOf(found))].length
      expect(findingsOf(body).filter((f: any) => f.policy === 'pii')).toEqual([
        {
          policy: 'pii',
          kind: 'credit_card',
          source: 'messages',
          index: 0,
          start,
          end: start + [...found].length,
          text: found,
        },
      ])
    }
    // A bare list of numbers is not read as a card.
    const list = await evaluate({ messages: [{ role: 'user', content: 'Codes 4111,1111,1111,1111.' }] })
    expect(list.verdict).toBe('pass')
  })

  it('reads the name of the function called: a finding there says `#name`, offsets in the name', async () => {
    const body = await evaluate(calling('{"confirm": true}', 'delete_everything'))
    expect(findingsOf(body)).toEqual([
      {
        policy: 'tools',
        kind: 'keyword',
        source: 'messages',
        index: 1,
        tool_call: 0,
        path: '#name',
        start: 0,
        end: 17,
        text: 'delete_everything',
      },
    ])
  })

  it('reads a card written as a JSON number, and arguments that are not JSON as sent', async () => {
    const number = '{"card": 4111111111111111}'
    expect(findingsOf(await evaluate(calling(number))).filter((f: any) => f.policy === 'pii')).toEqual([
      {
        policy: 'pii',
        kind: 'credit_card',
        source: 'messages',
        index: 1,
        tool_call: 0,
        path: '/card',
        start: 9,
        end: 25,
        text: '4111111111111111',
      },
    ])
    const truncated = '{"card": "4111 1111 1111 1111'
    expect(findingsOf(await evaluate(calling(truncated))).filter((f: any) => f.policy === 'pii')).toEqual([
      {
        policy: 'pii',
        kind: 'credit_card',
        source: 'messages',
        index: 1,
        tool_call: 0,
        path: '/card',
        start: 10,
        end: 29,
        text: '4111 1111 1111 1111',
      },
    ])
  })

  it('redacts the content only: findings in arguments leave `redacted` as it was, and the log keeps no arguments', async () => {
    const args = '{"card": "\\u0034111 1111 1111 1111"}'
    const conversation = calling(args)
    conversation.messages[1] = {
      ...conversation.messages[1],
      content: 'Paying with alice@example.com',
    } as any
    const body = await evaluate({ ...conversation, redact: true })
    expect(body.redacted).toEqual({
      messages: [
        { role: 'user', content: 'Refund order 1042.' },
        { role: 'assistant', content: 'Paying with [EMAIL]' },
      ],
      context: [],
    })
    const entry = await t.request({ method: 'GET', url: `/v1/applications/agent/evaluations/${body.id}` })
    expect(entry.statusCode, entry.body).toBe(200)
    // The log keeps the redacted texts, and the findings' texts as their labels.
    expect(JSON.stringify(entry.json())).not.toMatch(/u0034111|4111 1111/)
  })

  it('overrides a guarded chat completion whose tool call writes the card escaped', async () => {
    const args = '{"order": 1042, "payment": {"card": "\\u0034111\\u00201111 1111 1111"}}'
    double.script({
      json: completion('', {
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'refund', arguments: args } }],
            },
            logprobs: null,
            finish_reason: 'tool_calls',
          },
        ],
      }),
    })
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications/agent/chat/completions',
      payload: { messages: [{ role: 'user', content: 'Refund order 1042 to my card.' }] },
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.headers['x-warden-action']).toBe('override')
    const data = res.json()
    expect(data.choices[0].message).toEqual({
      role: 'assistant',
      content: 'I cannot do that.',
      refusal: null,
    })
    expect(res.body).not.toContain('u0034111')
    const entry = await t.request({
      method: 'GET',
      url: `/v1/applications/agent/evaluations/${data.warden.output_evaluation_id}`,
    })
    const start = args.indexOf('\\u0034')
    expect(findingsOf(entry.json()).find((f: any) => f.policy === 'pii')).toEqual({
      policy: 'pii',
      kind: 'credit_card',
      source: 'messages',
      index: 1,
      tool_call: 0,
      path: '/payment/card',
      start,
      end: start + '\\u0034111\\u00201111 1111 1111'.length,
      text: '[CREDIT_CARD]',
    })
  })
})
