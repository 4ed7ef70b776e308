import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'

/**
 * LiteLLM's Generic Guardrail API, tried with the request LiteLLM's documentation shows
 * (docs/my-website/docs/adding_provider/generic_guardrail_api.md in BerriAI/litellm) and its
 * reference server's rules: a text with a prohibited word is BLOCKED with a reason; anything
 * else is NONE.
 */
const CARD = '4111 1111 1111 1111'

/** The request of LiteLLM's documentation, field for field, with `texts` replaced. */
const documented = (texts: string[], input_type: 'request' | 'response' = 'request') => ({
  texts,
  images: ['base64_encoded_image_data'],
  tools: [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Get the current weather',
        parameters: { type: 'object', properties: { location: { type: 'string' } } },
      },
    },
  ],
  request_data: {
    user_api_key_hash: 'hash of the litellm virtual key used',
    user_api_key_alias: 'alias of the litellm virtual key used',
    user_api_key_user_id: 'user id associated with the litellm virtual key used',
    user_api_key_user_email: 'user email associated with the litellm virtual key used',
    user_api_key_team_id: 'team id associated with the litellm virtual key used',
    user_api_key_team_alias: 'team alias associated with the litellm virtual key used',
    user_api_key_end_user_id: 'end user id associated with the litellm virtual key used',
    user_api_key_org_id: 'org id associated with the litellm virtual key used',
  },
  input_type,
  litellm_call_id: 'unique_call_id',
  litellm_trace_id: 'trace_id',
  additional_provider_specific_params: {},
})

describe('LiteLLM’s Generic Guardrail API', () => {
  let t: TestApp
  const url = '/v1/applications/gateway/beta/litellm_basic_guardrail_api'
  const guard = (payload: object, key?: string | null) =>
    t.request({ method: 'POST', url, payload, ...(key !== undefined ? { key } : {}) })

  beforeAll(async () => {
    t = await createTestApp('sqlite')
    await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'gateway', name: 'gateway', description: '' },
    })
    for (const policy of [
      { id: 'no-badword', rules: [{ type: 'keywords', flagged: ['badword'] }], target: ['input'] },
      { id: 'no-card', rules: [{ type: 'pii', flagged: ['credit_card'] }], target: ['output'] },
      {
        id: 'mask-mail',
        rules: [{ type: 'pii', flagged: ['email'], action: 'mask' }],
        target: ['input', 'output'],
      },
      {
        id: 'polite',
        rules: [{ type: 'keywords', flagged: ['stupid'] }],
        target: ['output'],
        override_response: 'Let me rephrase that.',
      },
    ]) {
      const res = await t.request({
        method: 'POST',
        url: '/v1/applications/gateway/policies',
        payload: policy,
      })
      expect(res.statusCode, res.body).toBe(201)
    }
  })
  afterAll(async () => t.close())

  it('answers a mask with the texts masked, one for one: placeholders in a request, [KIND] in a response', async () => {
    const request = await guard(
      documented(['Hi, I am jane@example.com.', 'Also bob@example.org, and jane@example.com.']),
    )
    expect(request.statusCode, request.body).toBe(200)
    expect(request.json()).toEqual({
      action: 'GUARDRAIL_INTERVENED',
      // The policy reads the input, the last text: numbered there; a value masked wherever it stands.
      texts: ['Hi, I am [EMAIL_2].', 'Also [EMAIL_1], and [EMAIL_2].'],
    })
    const response = await guard(documented(['Write to jane@example.com.'], 'response'))
    expect(response.json()).toEqual({ action: 'GUARDRAIL_INTERVENED', texts: ['Write to [EMAIL].'] })
    // A masked value in a reply's tool calls cannot be masked through LiteLLM: blocked, never passed.
    const calls = await guard({
      ...documented(['Sending.'], 'response'),
      tool_calls: [
        { id: 'c', type: 'function', function: { name: 'send', arguments: '{"to": "jane@example.com"}' } },
      ],
    })
    expect(calls.json()).toMatchObject({ action: 'BLOCKED' })
    expect(calls.body).not.toContain('jane@')
  })

  it('answers NONE for the documentation’s request when the policies pass', async () => {
    const res = await guard(documented(['extracted text from the request']))
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual({ action: 'NONE' })
  })

  it('answers BLOCKED with the failing policy and rule, never the matched text', async () => {
    const res = await guard(documented(['This has a badword in it']))
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body.action).toBe('BLOCKED')
    expect(body.blocked_reason).toMatch(
      /^Blocked by Warden: policy no-badword rule 0 \(keywords: keyword\); evaluation [0-9a-f-]{36}$/,
    )
    expect(body.blocked_reason).not.toContain('badword in')
    // The evaluation is in the log, as any evaluation is.
    const id = body.blocked_reason.slice(-36)
    const logged = await t.request({ method: 'GET', url: `/v1/applications/gateway/evaluations/${id}` })
    expect(logged.statusCode, logged.body).toBe(200)
    expect(logged.json()).toMatchObject({ verdict: 'fail', action: 'block', source: 'api' })
  })

  it('replaces a reply that fails a policy with an override as GUARDRAIL_INTERVENED, one text for each', async () => {
    const res = await guard(documented(['That is a stupid question.', 'Anyway.'], 'response'))
    expect(res.json()).toEqual({ action: 'GUARDRAIL_INTERVENED', texts: ['Let me rephrase that.', ''] })
  })

  it('reads a reply’s tool calls as output, and blocks rather than rewrite a reply that calls tools', async () => {
    const args = `{"card": "${CARD}"}`
    const blocked = await guard({
      input_type: 'response',
      texts: [],
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'pay', arguments: args } }],
    })
    expect(blocked.json()).toMatchObject({ action: 'BLOCKED' })
    expect(blocked.json().blocked_reason).toMatch(/policy no-card rule 0 \(pii: credit_card\)/)
    expect(blocked.json().blocked_reason).not.toMatch(/4111[ -]?1111/)
    const rewritten = await guard({
      input_type: 'response',
      texts: ['stupid'],
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'noop', arguments: '{}' } }],
    })
    expect(rewritten.json()).toEqual({ action: 'BLOCKED', blocked_reason: 'Let me rephrase that.' })
  })

  it('reads structured messages as the conversation, passing over fields and parts it does not read', async () => {
    const none = await guard({
      input_type: 'request',
      texts: ['ignored when structured messages are sent'],
      structured_messages: [
        { role: 'system', content: 'You help.', cache_control: { type: 'ephemeral' } },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hello' },
            { type: 'image_url', image_url: { url: 'x' } },
          ],
        },
      ],
      a_field_of_a_later_release: true,
    })
    expect(none.json()).toEqual({ action: 'NONE' })
    const blocked = await guard({
      input_type: 'request',
      structured_messages: [{ role: 'user', content: 'this badword' }],
    })
    expect(blocked.json().action).toBe('BLOCKED')
  })

  it('reads the Responses API’s text parts, and tool-call arguments sent as an object', async () => {
    const parts = await guard({
      input_type: 'request',
      structured_messages: [{ role: 'user', content: [{ type: 'input_text', text: 'this badword' }] }],
    })
    expect(parts.json().blocked_reason).toMatch(/policy no-badword rule 0 \(keywords: keyword\)/)
    const answered = await guard({
      input_type: 'request',
      structured_messages: [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: [{ type: 'output_text', text: 'a stupid answer' }] },
      ],
    })
    expect(answered.json()).toEqual({ action: 'BLOCKED', blocked_reason: 'Let me rephrase that.' })
    const args = await guard({
      input_type: 'request',
      structured_messages: [
        { role: 'user', content: 'pay it' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'pay', arguments: { card: CARD } } },
          ],
        },
      ],
    })
    expect(args.json().blocked_reason).toMatch(/policy no-card rule 0 \(pii: credit_card\)/)
    // A reply's own tool calls follow OpenAI's schema: arguments are a string there.
    problem(
      await guard({
        input_type: 'response',
        texts: [],
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'pay', arguments: { card: CARD } } },
        ],
      }),
      422,
      'validation_error',
    )
  })

  it('needs a Warden key with evaluations:write, and answers problems as everywhere', async () => {
    problem(await guard(documented(['x']), null), 401, 'unauthenticated')
    problem(await guard({ texts: ['x'] }), 422, 'validation_error')
    problem(
      await t.request({
        method: 'POST',
        url: '/v1/applications/nobody/beta/litellm_basic_guardrail_api',
        payload: documented(['x']),
      }),
      404,
      'not_found',
    )
  })
})
