import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import fc from 'fast-check'
import OpenAI, { APIError } from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import type { StreamChunk } from '../../src/proxy/completions.js'
import { callUpstream, streamUpstream } from '../../src/proxy/upstream.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'
import {
  chunksOf,
  completion,
  type PushedStream,
  startUpstreamDouble,
  type UpstreamDouble,
} from '../helpers/upstream-double.js'

/**
 * Guarded chat completions (docs/chat-completions.md), with the official OpenAI SDK as the client and a
 * scripted OpenAI-compatible upstream on 127.0.0.1, through Warden listening on a real port.
 */

const UPSTREAM_KEY = 'sk-upstream-secret-0123456789abcdefghij'
const CARD = '4111 1111 1111 1111'
const LEAKED = 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH'
const OVERRIDE = 'Sorry, I cannot share that.'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe.each(STORE_KINDS)('POST /v1/applications/{application_id}/chat/completions (%s)', (kind) => {
  let t: TestApp
  let double: UpstreamDouble
  let base: string
  let client: OpenAI
  /** A provider that drops a kept-alive connection the moment it is used again, as idle timeouts race. */
  let resetting: Server
  let resetAnswers = 0

  const sdk = (application: string, key = t.adminKey, at = base) =>
    new OpenAI({ apiKey: key, baseURL: `${at}/v1/applications/${application}`, maxRetries: 0 })
  /** A raw HTTP call, for what the SDK hides (status, headers, the exact bytes). */
  const post = (application: string, body: unknown, key: string | null = t.adminKey, at = base) =>
    fetch(`${at}/v1/applications/${application}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
    })
  /** A raw streamed call that asks for the whole reply to be evaluated before any of it is sent. */
  const postBuffered = (application: string, body: unknown, key = t.adminKey, at = base) =>
    fetch(`${at}/v1/applications/${application}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${key}`,
        'x-warden-stream': 'buffered',
      },
      body: JSON.stringify(body),
    })
  /** The data events of a stream's body, parsed. */
  const eventsOf = (body: string) =>
    body
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)))
  /** A raw HTTP call with the body as JSON text, for bodies JSON.stringify cannot write. */
  const postText = (application: string, text: string) =>
    fetch(`${base}/v1/applications/${application}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminKey}` },
      body: text,
    })
  const user = (content: string) => [{ role: 'user' as const, content }]
  /** A problem of this route: problem+json, with OpenAI's `error` member saying the same. */
  const expectProblem = async (res: Response, status: number, code: string) => {
    expect(res.status).toBe(status)
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    const body = (await res.json()) as Record<string, unknown> & {
      detail: string
      errors?: { pointer: string; detail: string }[]
    }
    expect(body).toMatchObject({ status, code })
    expect(body.request_id).toBe(res.headers.get('x-request-id'))
    expect(body.error).toEqual({
      message: body.detail,
      type: code,
      param: body.errors?.[0]?.pointer ?? null,
      code,
    })
    return body
  }
  /** The error the OpenAI SDK throws for a call that fails. */
  const sdkError = async (call: Promise<unknown>): Promise<APIError> => {
    const error = await call.then(
      () => new Error('the call succeeded'),
      (thrown: unknown) => thrown,
    )
    expect(error).toBeInstanceOf(APIError)
    return error as APIError
  }
  /** What an SDK error exposes of the answer. */
  const seen = (error: APIError) => ({
    message: error.message,
    status: error.status,
    type: error.type,
    code: error.code,
    param: error.param,
  })
  const create = async (url: string, payload: object) => {
    const res = await t.request({ method: 'POST', url, payload })
    expect(res.statusCode, res.body).toBe(201)
  }

  beforeAll(async () => {
    double = await startUpstreamDouble()
    const served = new WeakMap<object, number>()
    resetting = createServer((req, res) => {
      const n = (served.get(req.socket) ?? 0) + 1
      served.set(req.socket, n)
      if (n > 1) {
        req.socket.destroy()
        return
      }
      req.resume()
      req.on('end', () => {
        resetAnswers++
        const body = JSON.stringify(completion('Your order ships on Thursday.'))
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
        res.end(body)
      })
    })
    await new Promise<void>((resolve) => resetting.listen(0, '127.0.0.1', resolve))
    t = await createTestApp(kind, {
      PROVIDER_RESETTING_BASE_URL: `http://127.0.0.1:${(resetting.address() as AddressInfo).port}/v1`,
      PROVIDER_DOUBLE_BASE_URL: double.baseUrl,
      PROVIDER_DOUBLE_API_KEY: UPSTREAM_KEY,
      PROVIDER_INTERNAL_BASE_URL: double.baseUrl,
      PROVIDER_INTERNAL_API_KEY: 'sk-internal-only-for-default',
      PROVIDER_INTERNAL_WORKSPACES: 'default,partners',
      PROVIDER_UNREACHABLE_BASE_URL: 'http://127.0.0.1:9/v1',
      // The default PROVIDER_TIMEOUT_MS (60 s), which no busy machine runs into; the tests about
      // timeouts have a Warden of their own.
      CHAT_COMPLETIONS_BODY_LIMIT_BYTES: String(2 * 1024 * 1024),
    })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    await create('/v1/applications', {
      id: 'support-bot',
      name: 'Support bot',
      description: '',
      provider: 'double',
      model: 'double-model',
      parameters: { system_prompt: 'You are a support agent.', temperature: 0.3, max_tokens: 256, top_k: 40 },
    })
    await create('/v1/applications/support-bot/policies', {
      id: 'no-pii',
      rules: [{ type: 'pii', flagged: ['credit_card', 'api_key'] }],
      target: ['input', 'output'],
      override_response: OVERRIDE,
    })
    await create('/v1/applications/support-bot/policies', {
      id: 'no-forbidden-topic',
      rules: [{ type: 'keywords', flagged: ['forbidden topic'] }],
      target: ['input'],
    })
    await create('/v1/applications/support-bot/policies', {
      id: 'watch',
      rules: [{ type: 'keywords', flagged: ['hello'] }],
      target: ['input', 'output'],
      mode: 'monitor',
    })
    await create('/v1/applications', { id: 'plain', name: 'Plain', description: '', provider: 'Double' })
    await create('/v1/applications', { id: 'no-provider', name: 'x', description: '', model: 'm' })
    await create('/v1/applications', {
      id: 'elsewhere',
      name: 'x',
      description: '',
      provider: 'azure-eu',
      model: 'm',
    })
    await create('/v1/applications', {
      id: 'resetting',
      name: 'x',
      description: '',
      provider: 'resetting',
      model: 'm',
    })
    await create('/v1/applications', {
      id: 'unreachable',
      name: 'x',
      description: '',
      provider: 'unreachable',
      model: 'm',
    })
    client = sdk('support-bot')
  })
  afterAll(async () => {
    await t?.close()
    await double?.close()
    resetting?.closeAllConnections()
    await new Promise((resolve) => resetting?.close(resolve))
  })
  beforeEach(() => {
    double.received.length = 0
  })

  describe('pass-through', () => {
    it('applies the application’s model, parameters and system prompt, and sends the provider’s key upstream only', async () => {
      const { data, response } = await client.chat.completions
        .create({ model: '', messages: user('hello there') })
        .withResponse()
      expect(response.status).toBe(200)
      expect(response.headers.get('x-warden-action')).toBe('allow')
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
      expect(data.choices[0]?.message.content).toBe('echo: hello there')
      expect(data.choices[0]?.finish_reason).toBe('stop')
      expect(data).toMatchObject({
        id: 'chatcmpl-upstream',
        model: 'upstream-model',
        system_fingerprint: 'fp_double',
      })
      expect(data.usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 })
      const warden = (data as unknown as { warden: Record<string, unknown> }).warden
      expect(warden.action).toBe('allow')
      expect(warden.input_evaluation_id).toMatch(UUID)
      expect(warden.output_evaluation_id).toMatch(UUID)
      expect(warden.output_evaluation_ids).toEqual([warden.output_evaluation_id])

      expect(double.received).toHaveLength(1)
      const [sent] = double.received
      expect(sent?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`)
      expect(JSON.stringify(sent?.headers)).not.toContain(t.adminKey)
      expect(sent?.body).toEqual({
        model: 'double-model',
        messages: [
          { role: 'system', content: 'You are a support agent.' },
          { role: 'user', content: 'hello there' },
        ],
        temperature: 0.3,
        max_tokens: 256,
        top_k: 40,
      })
      expect(JSON.stringify(data)).not.toContain(UPSTREAM_KEY)
    })

    it('records both evaluations in the evaluation log under the request’s id, never the provider’s key', async () => {
      const res = await post('support-bot', { model: 'm', messages: user('hello log') })
      const requestId = res.headers.get('x-request-id')
      const { warden } = (await res.json()) as { warden: Record<string, string> }
      const logged = []
      for (const id of [warden.input_evaluation_id, warden.output_evaluation_id]) {
        const entry = await t.request({
          method: 'GET',
          url: `/v1/applications/support-bot/evaluations/${id}`,
        })
        expect(entry.statusCode, entry.body).toBe(200)
        expect(entry.body).not.toContain(UPSTREAM_KEY)
        logged.push(entry.json())
      }
      expect(logged.map((e) => [e.id, e.request_id, e.source])).toEqual([
        [warden.input_evaluation_id, requestId, 'chat_input'],
        [warden.output_evaluation_id, requestId, 'chat_output'],
      ])
    })

    it('judges the output by the revisions the input was judged by, though a policy changes between them', async () => {
      await create('/v1/applications', {
        id: 'steady-bot',
        name: 'x',
        description: '',
        provider: 'double',
        model: 'm',
      })
      await create('/v1/applications/steady-bot/policies', {
        id: 'topic',
        rules: [{ type: 'keywords', flagged: ['forbidden topic'] }],
        target: ['input', 'output'],
      })
      // While the upstream streams its reply, the policy changes to flag a word of that reply.
      let patched: Promise<unknown> = Promise.resolve()
      double.script(() => {
        patched = t.request({
          method: 'PATCH',
          url: '/v1/applications/steady-bot/policies/topic',
          headers: { 'content-type': 'application/merge-patch+json' },
          payload: { rules: [{ type: 'keywords', flagged: ['thursday'] }] },
        })
        return { chunks: chunksOf('It arrives on Thursday.', { size: 32 }), gapMs: 60 }
      })
      const res = await post('steady-bot', { stream: true, messages: user('Where is my parcel?') })
      expect(res.status).toBe(200)
      const text = await res.text()
      expect((await patched) as { statusCode: number }).toMatchObject({ statusCode: 200 })
      // Released as it grows: no header states a decision made after it left.
      expect(res.headers.has('x-warden-action')).toBe(false)
      const ids = [...text.matchAll(/"(?:input|output)_evaluation_id":"([^"]+)"/g)].map((m) => m[1])
      expect(ids).toHaveLength(2)
      const revisions = []
      for (const id of ids) {
        const entry = await t.request({ method: 'GET', url: `/v1/applications/steady-bot/evaluations/${id}` })
        expect(entry.statusCode, entry.body).toBe(200)
        revisions.push(entry.json().policies.map((p: { id: string; revision: number }) => [p.id, p.revision]))
      }
      expect(revisions).toEqual([[['topic', 1]], [['topic', 1]]])
      // The next completion is judged by the change.
      double.script({ json: completion('It arrives on Thursday.') })
      const next = await post('steady-bot', { messages: user('And when?') })
      expect(next.headers.get('x-warden-action')).not.toBe('allow')
    })

    it('passes every field of the request as sent, the request’s values over the defaults', async () => {
      const request = {
        model: 'gpt-4o-mini',
        messages: [
          { role: 'developer' as const, content: 'Answer briefly.' },
          { role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] },
        ],
        temperature: 1.1,
        top_p: 0.9,
        max_completion_tokens: 50,
        n: 1,
        seed: 7,
        user: 'end-user-1',
        presence_penalty: 0.5,
        frequency_penalty: 0.1,
        logit_bias: { '50256': -100 },
        logprobs: true,
        top_logprobs: 2,
        stop: ['\n\n'],
        tools: [
          { type: 'function' as const, function: { name: 'find_order', parameters: { type: 'object' } } },
        ],
        tool_choice: 'auto' as const,
        parallel_tool_calls: false,
        response_format: { type: 'json_object' as const },
        metadata: { ticket: 'T-1' },
        store: false,
        reasoning_effort: 'low' as const,
        service_tier: 'auto' as const,
        modalities: ['text' as const],
        prediction: { type: 'content' as const, content: 'x' },
        safety_identifier: 'hash-1',
        prompt_cache_key: 'bot',
        verbosity: 'low' as const,
      }
      const data = await client.chat.completions.create(request)
      expect(data.choices[0]?.message.content).toBe('echo: [object Object]')
      // No system prompt (a developer message is there), no max_tokens (max_completion_tokens is): the application's top_k.
      expect(double.received[0]?.body).toEqual({ ...request, top_k: 40 })
    })

    it('sends the system prompt only when the request has no system message of its own', async () => {
      const own = [
        { role: 'user' as const, content: 'first' },
        { role: 'system' as const, content: 'Be terse.' },
        { role: 'user' as const, content: 'second' },
      ]
      await client.chat.completions.create({ model: 'm', messages: own })
      expect(double.received[0]?.body.messages).toEqual(own)
      await client.chat.completions.create({ model: 'm', messages: user('no system here') })
      expect(double.received[1]?.body.messages).toEqual([
        { role: 'system', content: 'You are a support agent.' },
        ...user('no system here'),
      ])
    })

    it('sends no top_k and no defaults for an application without parameters; the provider name is matched case-blind', async () => {
      await sdk('plain').chat.completions.create({ model: 'm1', messages: user('x'), top_p: null })
      expect(double.received[0]?.body).toEqual({ model: 'm1', messages: user('x'), top_p: null })
      await sdk('plain').chat.completions.create({ model: 'm1', messages: user('x'), top_k: 5 } as never)
      expect(double.received[1]?.body).toEqual({ model: 'm1', messages: user('x'), top_k: 5 })
    })

    it('passes a tool call through once its arguments passed, and replaces one carrying a card', async () => {
      const toolCall = (args: string) => ({
        id: 'call_1',
        type: 'function',
        function: { name: 'find_order', arguments: args },
      })
      const reply = (args: string) => ({
        json: completion('', {
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: null, tool_calls: [toolCall(args)] },
              finish_reason: 'tool_calls',
            },
          ],
        }),
      })
      double.script(reply('{"order":1042}'))
      const data = await client.chat.completions.create({ model: 'm', messages: user('where is my order?') })
      expect(data.choices[0]?.message.tool_calls).toEqual([toolCall('{"order":1042}')])
      expect((data as any).warden).toMatchObject({
        action: 'allow',
        output_evaluation_id: expect.any(String),
      })

      double.script(reply(`{"card":"${CARD}"}`))
      const replaced = await client.chat.completions.create({ model: 'm', messages: user('refund?') })
      expect(replaced.choices[0]?.message).toEqual({ role: 'assistant', content: OVERRIDE, refusal: null })
      expect((replaced as any).warden.action).toBe('override')
    })
  })

  describe('input evaluated first', () => {
    it('never calls the upstream for a prompt with a card number, and answers the override', async () => {
      const { data, response } = await client.chat.completions
        .create({ model: 'm', n: 2, messages: user(`My card is ${CARD}, refund me`) })
        .withResponse()
      expect(double.received).toHaveLength(0)
      expect(response.status).toBe(200)
      expect(response.headers.get('x-warden-action')).toBe('override')
      expect(data.object).toBe('chat.completion')
      expect(data.model).toBe('m')
      expect(data.id).toMatch(/^chatcmpl-/)
      expect(data.choices).toEqual(
        [0, 1].map((index) => ({
          index,
          message: { role: 'assistant', content: OVERRIDE, refusal: null },
          logprobs: null,
          finish_reason: 'content_filter',
        })),
      )
      expect(data.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 })
      const warden = (data as any).warden
      expect(warden).toMatchObject({
        action: 'override',
        output_evaluation_id: null,
        output_evaluation_ids: [],
      })
      expect(warden.input_evaluation_id).toMatch(UUID)
    })

    it('blocks with an empty reply when the failing policy has no override', async () => {
      const { data, response } = await client.chat.completions
        .create({ model: 'm', messages: user('tell me about the forbidden topic') })
        .withResponse()
      expect(double.received).toHaveLength(0)
      expect(response.headers.get('x-warden-action')).toBe('block')
      expect(data.choices[0]?.message.content).toBe('')
      expect(data.choices[0]?.finish_reason).toBe('content_filter')
    })

    it('blocks a reply that fails a policy without an override with an empty reply too', async () => {
      await create('/v1/applications', {
        id: 'quiet-bot',
        name: 'x',
        description: '',
        provider: 'double',
        model: 'm',
      })
      await create('/v1/applications/quiet-bot/policies', {
        id: 'no-dates',
        rules: [{ type: 'keywords', flagged: ['thursday'] }],
        target: ['output'],
      })
      double.script({ json: completion('It arrives on Thursday.') })
      const res = await post('quiet-bot', { messages: user('When does it arrive?') })
      expect(res.status).toBe(200)
      expect(double.received).toHaveLength(1)
      expect(res.headers.get('x-warden-action')).toBe('block')
      const data = (await res.json()) as {
        choices: { message: { content: string }; finish_reason: string }[]
      }
      expect(data.choices[0]?.message.content).toBe('')
      expect(data.choices[0]?.finish_reason).toBe('content_filter')
    })

    it('lets a monitoring policy watch without deciding', async () => {
      const data = await client.chat.completions.create({ model: 'm', messages: user('hello') })
      expect((data as any).warden.action).toBe('allow')
      expect(double.received).toHaveLength(1)
    })
  })

  describe('output evaluated before the client sees it', () => {
    it('replaces a reply that leaks a key, and keeps the upstream’s usage', async () => {
      double.script({ json: completion(`Here is the key: ${LEAKED}`) })
      const { data, response } = await client.chat.completions
        .create({ model: 'm', messages: user('what is the admin key?') })
        .withResponse()
      expect(double.received).toHaveLength(1)
      expect(response.headers.get('x-warden-action')).toBe('override')
      expect(data.choices).toEqual([
        {
          index: 0,
          message: { role: 'assistant', content: OVERRIDE, refusal: null },
          logprobs: null,
          finish_reason: 'content_filter',
        },
      ])
      expect(data.usage?.total_tokens).toBe(15)
      expect(JSON.stringify(data)).not.toContain(LEAKED)
      const warden = (data as any).warden
      expect(warden.output_evaluation_id).toMatch(UUID)
      expect(warden.output_evaluation_id).not.toBe(warden.input_evaluation_id)
    })

    it('evaluates every choice on its own when n > 1', async () => {
      double.script({ json: completion(['All good.', `Card ${CARD}`, 'Fine too.']) })
      const { data, response } = await client.chat.completions
        .create({ model: 'm', n: 3, messages: user('three answers please') })
        .withResponse()
      expect(response.headers.get('x-warden-action')).toBe('override')
      expect(data.choices.map((c) => [c.message.content, c.finish_reason])).toEqual([
        ['All good.', 'stop'],
        [OVERRIDE, 'content_filter'],
        ['Fine too.', 'stop'],
      ])
      const ids = (data as any).warden.output_evaluation_ids
      expect(ids).toHaveLength(3)
      expect(new Set(ids).size).toBe(3)
    })
  })

  describe('streaming', () => {
    it('replays the upstream’s stream once evaluated, with usage when asked', async () => {
      const text = 'Your order ships on Monday.'
      double.script({ chunks: chunksOf(text, { usage: true }) })
      const stream = await client.chat.completions.create({
        model: 'm',
        stream: true,
        stream_options: { include_usage: true },
        messages: user('when does it ship?'),
      })
      let received = ''
      const chunks: any[] = []
      for await (const chunk of stream) {
        chunks.push(chunk)
        received += chunk.choices[0]?.delta.content ?? ''
      }
      expect(received).toBe(text)
      expect(chunks.at(-1).warden).toMatchObject({ action: 'allow' })
      expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 })
      expect(chunks.at(-2).choices[0].finish_reason).toBe('stop')
      expect(double.received[0]?.body.stream).toBe(true)
      expect(double.received[0]?.body.stream_options).toEqual({ include_usage: true })
    })

    it('sends OpenAI’s event format, with X-Warden-Action only once the decision is made', async () => {
      double.script({ chunks: chunksOf('ok') }, { chunks: chunksOf('ok') })
      const buffered = await postBuffered('support-bot', { model: 'm', stream: true, messages: user('hi') })
      expect(buffered.headers.get('x-warden-action')).toBe('allow')
      await buffered.text()
      const res = await post('support-bot', { model: 'm', stream: true, messages: user('hi') })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
      // Released as it grows, the headers leave before the output is decided.
      expect(res.headers.has('x-warden-action')).toBe(false)
      const body = await res.text()
      const events = body.split('\n\n')
      expect(events.at(-1)).toBe('')
      expect(events.at(-2)).toBe('data: [DONE]')
      for (const e of events.slice(0, -2)) expect(e).toMatch(/^data: \{/)
    })

    it('replaces a buffered streamed reply that leaks a key before any of it is sent', async () => {
      const text = `Sure! The key is ${LEAKED}, keep it safe.`
      double.script({ chunks: chunksOf(text, { size: 3, usage: true }) })
      const res = await postBuffered('support-bot', {
        model: 'm',
        stream: true,
        stream_options: { include_usage: true },
        messages: user('what is the key?'),
      })
      expect(res.headers.get('x-warden-action')).toBe('override')
      const body = await res.text()
      expect(body).not.toContain(LEAKED.slice(0, 3))
      for (let i = 0; i < text.length; i += 3)
        expect(body).not.toContain(`"content":"${text.slice(i, i + 3)}"`)
      const chunks = body
        .split('\n\n')
        .filter((e) => e.startsWith('data: {'))
        .map((e) => JSON.parse(e.slice(6)))
      expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(OVERRIDE)
      expect(chunks.at(-2).choices[0].finish_reason).toBe('content_filter')
      expect(chunks.at(-1).usage.total_tokens).toBe(15)
      expect(chunks.at(-1).warden.action).toBe('override')

      // Released as it grows (the default): the headers say nothing of a decision not yet made.
      double.script({ chunks: chunksOf(text) })
      const released = await post('support-bot', { model: 'm', stream: true, messages: user('key?') })
      expect(released.headers.has('x-warden-action')).toBe(false)
      expect(eventsOf(await released.text()).at(-1).warden.action).toBe('override')

      // Through the SDK: the text before the key, then the override.
      double.script({ chunks: chunksOf(text) })
      let received = ''
      let finish: string | null = null
      for await (const chunk of await client.chat.completions.create({
        model: 'm',
        stream: true,
        messages: user('key?'),
      })) {
        received += chunk.choices[0]?.delta.content ?? ''
        finish = chunk.choices[0]?.finish_reason ?? finish
      }
      expect(received).toBe(`Sure! The key is ${OVERRIDE}`)
      expect(finish).toBe('content_filter')
    })

    it('replaces only the failing choice of a streamed n > 1 reply', async () => {
      double.script({ chunks: chunksOf(['Fine.', `Card ${CARD}`]) })
      const texts = ['', '']
      const finishes: (string | null)[] = [null, null]
      for await (const chunk of await client.chat.completions.create({
        model: 'm',
        n: 2,
        stream: true,
        messages: user('two'),
      })) {
        for (const c of chunk.choices) {
          texts[c.index] += c.delta.content ?? ''
          finishes[c.index] = c.finish_reason ?? finishes[c.index] ?? null
        }
      }
      expect(texts).toEqual(['Fine.', OVERRIDE])
      expect(finishes).toEqual(['stop', 'content_filter'])
    })

    it('streams the override when the input fails, without calling the upstream', async () => {
      const res = await post('support-bot', {
        model: 'm',
        stream: true,
        stream_options: { include_usage: true },
        messages: user(`card ${CARD}`),
      })
      expect(double.received).toHaveLength(0)
      expect(res.headers.get('x-warden-action')).toBe('override')
      const body = await res.text()
      const chunks = body
        .split('\n\n')
        .filter((e) => e.startsWith('data: {'))
        .map((e) => JSON.parse(e.slice(6)))
      expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(OVERRIDE)
      expect(chunks[1].choices[0].finish_reason).toBe('content_filter')
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: 0 } })
      expect(body.endsWith('data: [DONE]\n\n')).toBe(true)

      // Without stream_options.include_usage: no usage chunk, and no usage field on any chunk.
      const plain = await post('support-bot', { model: 'm', stream: true, messages: user(`card ${CARD}`) })
      const plainChunks = (await plain.text())
        .split('\n\n')
        .filter((e) => e.startsWith('data: {'))
        .map((e) => JSON.parse(e.slice(6)))
      expect(plainChunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(OVERRIDE)
      for (const chunk of plainChunks) {
        expect(chunk).not.toHaveProperty('usage')
        expect(chunk.choices).toHaveLength(1)
      }
    })

    it('aborts the upstream call when the client disconnects mid-stream', async () => {
      double.script({ chunks: chunksOf('a long answer that never ends'), hang: true })
      const hungUp = double.nextHangUp()
      const controller = new AbortController()
      const pending = client.chat.completions.create(
        { model: 'm', stream: true, messages: user('go on') },
        { signal: controller.signal },
      )
      // The stream has started (released as it grows): the client hangs up at its first words.
      let read = ''
      const reading = (async () => {
        for await (const chunk of await pending) {
          read += chunk.choices[0]?.delta.content ?? ''
          if (read !== '') controller.abort()
        }
      })()
      await reading.catch(() => undefined)
      expect('a long answer that never ends'.startsWith(read)).toBe(true)
      expect(read).not.toBe('')
      expect(double.received).toHaveLength(1)
      // The upstream never ends its answer: only Warden hanging up on it ends the call.
      await hungUp
      expect(double.hangUps).toBeGreaterThan(0)
    })
  })

  describe('streams released as the reply grows', () => {
    it('sends the first text before the upstream finished, through the SDK', async () => {
      double.script({ chunks: chunksOf('Your order ships on Monday.'), hang: true })
      const stream = await client.chat.completions.create({
        model: 'm',
        stream: true,
        messages: user('when?'),
      })
      let first = ''
      for await (const chunk of stream) {
        first += chunk.choices[0]?.delta.content ?? ''
        if (first.length > 0) break
      }
      // The upstream is still answering (it never ends): its first words came through already.
      expect('Your order ships on Monday.'.startsWith(first)).toBe(true)
      expect(first.length).toBeGreaterThan(0)
    })

    it('never sends a card number written mid-stream, ends with the override, and logs the whole text received', async () => {
      const text = `Thanks for waiting. Your card ${CARD} is on file, and the refund goes there.`
      // The upstream never ends its answer: Warden hangs up on it once the card is written.
      double.script({ chunks: chunksOf(text, { size: 2 }), gapMs: 2, hang: true })
      const hungUp = double.nextHangUp()
      let received = ''
      let finish: string | null = null
      let last: any = null
      for await (const chunk of await client.chat.completions.create({
        model: 'm',
        stream: true,
        messages: user('refund?'),
      })) {
        received += chunk.choices[0]?.delta.content ?? ''
        finish = chunk.choices[0]?.finish_reason ?? finish
        last = chunk
      }
      expect(received).toBe(`Thanks for waiting. Your card ${OVERRIDE}`)
      expect(received).not.toMatch(/4111[ -]?1111/)
      expect(finish).toBe('content_filter')
      expect(last.warden).toMatchObject({ action: 'override' })
      await hungUp

      // The log holds the output evaluation of what was received, with the card's finding.
      double.script({ chunks: chunksOf(text, { size: 2 }), gapMs: 2 })
      const res = await post('support-bot', { model: 'm', stream: true, messages: user('refund?') })
      const events = eventsOf(await res.text())
      const outcome = events.at(-1).warden
      expect(events.at(-1).choices[0]).toMatchObject({
        delta: { content: OVERRIDE },
        finish_reason: 'content_filter',
      })
      const entry = await t.request({
        method: 'GET',
        url: `/v1/applications/support-bot/evaluations/${outcome.output_evaluation_id}`,
      })
      expect(entry.statusCode).toBe(200)
      const logged = entry.json()
      expect(logged.source).toBe('chat_output')
      const findings = logged.policies.flatMap((p: any) => p.rules.flatMap((r: any) => r.findings))
      expect(findings).toContainEqual(expect.objectContaining({ kind: 'credit_card' }))
    })

    it('relays a stream as it arrives when no enforced policy reads the output', async () => {
      await create('/v1/applications', {
        id: 'input-only',
        name: 'x',
        description: '',
        provider: 'double',
        model: 'm',
      })
      await create('/v1/applications/input-only/policies', {
        id: 'no-cards-in',
        rules: [{ type: 'pii', flagged: ['credit_card'] }],
        target: ['input'],
      })
      await create('/v1/applications/input-only/policies', {
        id: 'watch-out',
        rules: [{ type: 'pii', flagged: ['credit_card'] }],
        target: ['output'],
        mode: 'monitor',
      })
      const text = `Your card ${CARD} is on file.`
      const chunks = chunksOf(text, { size: 3 })
      double.script({ chunks })
      const res = await post('input-only', { model: 'm', stream: true, messages: user('card?') })
      const events = eventsOf(await res.text())
      const contents = events.map((c) => c.choices[0]?.delta?.content ?? '').filter((c) => c !== '')
      // Each upstream chunk passes as it came, the card too: only a monitoring policy reads it.
      expect(contents.join('')).toBe(text)
      expect(contents.length).toBeGreaterThanOrEqual(Math.ceil([...text].length / 3))
      expect(events.at(-1).warden).toMatchObject({ action: 'allow' })
    })

    it('answers X-Warden-Stream: buffered with nothing before the whole reply passed', async () => {
      double.script({ chunks: chunksOf('All fine here.') })
      const res = await postBuffered('support-bot', { model: 'm', stream: true, messages: user('x') })
      const events = eventsOf(await res.text())
      expect(events.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('All fine here.')
      expect(events.at(-1).warden).toMatchObject({ action: 'allow' })
    })
  })

  describe('an upstream that hides text where a policy might not read it', () => {
    const shell = { id: 'chatcmpl-upstream', object: 'chat.completion.chunk', created: 1, model: 'u' }
    const chunk = (choices: unknown[]) => ({ ...shell, choices })
    const start = chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }])
    const end = chunk([{ index: 0, delta: {}, finish_reason: 'stop' }])
    /** Every string a client can read in an answer, in order, white space removed. */
    const readable = (body: string) => {
      const strings: string[] = []
      const walk = (value: unknown) => {
        if (typeof value === 'string') strings.push(value)
        else if (value && typeof value === 'object') for (const v of Object.values(value)) walk(v)
      }
      for (const line of body.split('\n')) {
        if (!line.startsWith('data: {')) continue
        walk(JSON.parse(line.slice(6)))
      }
      if (body.startsWith('{')) walk(JSON.parse(body))
      return strings.join('').replace(/\s/g, '')
    }
    const DIGITS = CARD.replace(/ /g, '')

    it('never relays another choice index’s text in a released stream', async () => {
      double.script({
        chunks: [
          start,
          chunk([{ index: 0, delta: { content: 'Fine. ' }, finish_reason: null }]),
          chunk([{ index: 1, delta: { content: `Card ${CARD}` }, finish_reason: null }]),
          end,
        ],
      })
      const res = await post('support-bot', { model: 'm', stream: true, messages: user('x') })
      const body = await res.text()
      expect(readable(body)).not.toContain(DIGITS)
      expect(
        eventsOf(body)
          .map((c) => c.choices?.[0]?.delta?.content ?? '')
          .join(''),
      ).toBe('Fine. ')
    })

    it('evaluates a refusal beside content, buffered, released and as JSON', async () => {
      const both = (refusal: string) => [
        start,
        chunk([{ index: 0, delta: { content: 'Fine. ', refusal }, finish_reason: null }]),
        end,
      ]
      double.script({ chunks: both(`Card ${CARD}`) })
      const buffered = await postBuffered('support-bot', { model: 'm', stream: true, messages: user('x') })
      expect(buffered.headers.get('x-warden-action')).toBe('override')
      expect(readable(await buffered.text())).not.toContain(DIGITS)
      double.script({ chunks: both(`Card ${CARD}`) })
      const released = await post('support-bot', { model: 'm', stream: true, messages: user('x') })
      const text = await released.text()
      expect(readable(text)).not.toContain(DIGITS)
      expect(eventsOf(text).at(-1).warden.action).toBe('override')
      double.script({
        json: completion('Fine.', {
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: 'Fine.', refusal: `Card ${CARD}` },
              logprobs: null,
              finish_reason: 'stop',
            },
          ],
        }),
      })
      const json = await post('support-bot', { model: 'm', messages: user('x') })
      expect(json.headers.get('x-warden-action')).toBe('override')
      expect(readable(await json.text())).not.toContain(DIGITS)
    })

    it('drops the fields no policy reads: reasoning, audio, and the log probabilities of text held back', async () => {
      const hidden = (index: number) => [
        start,
        chunk([
          {
            index,
            delta: { content: 'Fine. ', reasoning_content: `Card ${CARD}`, audio: { transcript: CARD } },
            logprobs: { content: [{ token: CARD, logprob: 0, bytes: null, top_logprobs: [] }] },
            finish_reason: null,
          },
        ]),
        chunk([
          {
            index,
            delta: { content: '4111 ' },
            logprobs: { content: [{ token: CARD }] },
            finish_reason: null,
          },
        ]),
        end,
      ]
      for (const ask of [post, postBuffered]) {
        double.script({ chunks: hidden(0) })
        const res = await ask('support-bot', { model: 'm', stream: true, messages: user('x') })
        const body = await res.text()
        expect(body).not.toContain('reasoning_content')
        expect(body).not.toContain('transcript')
        expect(readable(body)).not.toContain(DIGITS)
      }
      double.script({
        json: completion('Fine.', {
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: 'Fine.',
                reasoning_content: CARD,
                audio: { transcript: CARD },
              },
              logprobs: null,
              finish_reason: 'stop',
            },
          ],
        }),
      })
      const json = await post('support-bot', { model: 'm', messages: user('x') })
      expect(json.headers.get('x-warden-action')).toBe('allow')
      expect(readable(await json.text())).not.toContain(DIGITS)
    })

    it('never lets a card reach the client, wherever and in whichever pieces the upstream puts it', async () => {
      const piece = fc.record({
        index: fc.constantFrom(0, 0, 0, 1, 2),
        field: fc.constantFrom('content', 'content', 'refusal', 'reasoning_content', 'logprobs'),
      })
      await fc.assert(
        fc.asyncProperty(
          fc.array(piece, { minLength: 1, maxLength: 5 }),
          fc.boolean(),
          async (pieces, buffered) => {
            // The card cut into as many pieces as there are places, in order.
            const size = Math.ceil(CARD.length / pieces.length)
            const chunks: unknown[] = [start]
            pieces.forEach(({ index, field }, i) => {
              const text = CARD.slice(i * size, (i + 1) * size)
              const choice =
                field === 'logprobs'
                  ? {
                      index,
                      delta: { content: '' },
                      logprobs: { content: [{ token: text }] },
                      finish_reason: null,
                    }
                  : { index, delta: { [field]: text }, finish_reason: null }
              chunks.push(chunk([choice]))
            })
            chunks.push(end)
            double.script({ chunks })
            const res = await (buffered ? postBuffered : post)('support-bot', {
              model: 'm',
              stream: true,
              messages: user('x'),
            })
            return !readable(await res.text()).includes(DIGITS)
          },
        ),
        { numRuns: 40 },
      )
    })
  })

  describe('upstream failures', () => {
    it('answers 502 upstream_error when the upstream answers 500', async () => {
      const failing = { json: { error: { message: 'The server had an error' } }, status: 500 }
      double.script(failing, failing)
      const failed = await post('support-bot', { model: 'm', messages: user('x') })
      const requestId = failed.headers.get('x-request-id')
      const body = await expectProblem(failed, 502, 'upstream_error')
      expect(body.detail).toBe('The model provider answered HTTP 500: The server had an error')
      // The input was evaluated before the upstream failed: its entry is in the log all the same.
      const log = await t.request({ method: 'GET', url: '/v1/applications/support-bot/evaluations?limit=5' })
      const inputEntry = log.json().data.find((e: { request_id: string }) => e.request_id === requestId)
      expect(inputEntry).toMatchObject({ source: 'chat_input', request_id: requestId })
      await expect(client.chat.completions.create({ model: 'm', messages: user('x') })).rejects.toMatchObject(
        {
          status: 502,
        },
      )
    })

    it('never shows the provider’s key, even when the provider echoes it', async () => {
      double.script({
        json: { error: { message: `Incorrect API key provided: ${UPSTREAM_KEY}` } },
        status: 401,
      })
      const res = await post('support-bot', { model: 'm', messages: user('x') })
      const text = await res.clone().text()
      await expectProblem(res, 502, 'upstream_error')
      expect(text).not.toContain(UPSTREAM_KEY)
      expect(text).toContain('HTTP 401: Incorrect API key provided: [REDACTED]')
      // Nor the log: the input's entry of that request is there, without it.
      const requestId = res.headers.get('x-request-id')
      const log = await t.request({ method: 'GET', url: '/v1/applications/support-bot/evaluations?limit=5' })
      expect(log.body).not.toContain(UPSTREAM_KEY)
      expect(log.json().data.map((e: { request_id: string }) => e.request_id)).toContain(requestId)
    })

    it('never shows the provider’s key when it straddles the cut to 500 characters, nor split, encoded or mid-stream', async () => {
      const base64 = Buffer.from(UPSTREAM_KEY).toString('base64')
      const echoes = [
        // The message is cut to 500 characters: the key across the cut once kept all but its last.
        `${'x'.repeat(465)} ${UPSTREAM_KEY}`,
        `key: ${UPSTREAM_KEY.slice(0, 20)}\n${UPSTREAM_KEY.slice(20)}`,
        `key=${encodeURIComponent(`${UPSTREAM_KEY}/`)}`,
        `Authorization: Basic ${base64}`,
      ]
      for (const message of echoes) {
        double.script({ json: { error: { message } }, status: 401 })
        const res = await post('support-bot', { model: 'm', messages: user('x') })
        const body = await expectProblem(res, 502, 'upstream_error')
        expect(body.detail).toContain('[REDACTED]')
        for (const leaked of [UPSTREAM_KEY.slice(0, 8), UPSTREAM_KEY.slice(-8), base64.slice(8, 16)])
          expect(body.detail).not.toContain(leaked)
      }
      double.script({ chunks: [chunksOf('partial')[0], { error: { message: `bad key ${UPSTREAM_KEY}` } }] })
      const streamed = await postBuffered('support-bot', { model: 'm', stream: true, messages: user('x') })
      const text = await streamed.text()
      expect(text).toContain('[REDACTED]')
      expect(text).not.toContain(UPSTREAM_KEY.slice(-8))
    })

    it('answers 502 for a reply whose read fields have another type, which no policy could read, naming the field', async () => {
      const withMessage = (message: object, choice: object = {}) =>
        completion('', {
          choices: [
            { index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop', ...choice },
          ],
        })
      const wrong: [object, string][] = [
        [withMessage({ content: 4111111111111111 }), 'choices/0/message/content that is a number'],
        [
          withMessage({ content: { text: '4111 1111 1111 1111' } }),
          'choices/0/message/content that is an object',
        ],
        [withMessage({ content: 'fine' }, { text: '4111 1111 1111 1111' }), 'choices/0/text, the legacy'],
        [
          withMessage({ content: [{ type: 'image_url', image_url: { url: 'x' } }] }),
          'choices/0/message/content/0 of type "image_url"',
        ],
        [withMessage({ refusal: 42 }), 'choices/0/message/refusal that is a number'],
        [
          withMessage({
            content: null,
            tool_calls: [
              {
                id: 'c',
                type: 'function',
                function: { name: 'pay', arguments: { card: '4111 1111 1111 1111' } },
              },
            ],
          }),
          'choices/0/message/tool_calls/0/function/arguments that are an object',
        ],
        [
          withMessage({ content: null, function_call: { name: 'pay', arguments: ['4111'] } }),
          'choices/0/message/function_call/arguments that are an array',
        ],
      ]
      for (const [reply, named] of wrong) {
        double.script({ json: reply })
        const res = await post('plain', { model: 'm', messages: user('x') })
        const text = await res.clone().text()
        const body = await expectProblem(res, 502, 'upstream_error')
        expect(body.detail).toContain(
          'The model provider answered a chat completion that Warden cannot relay',
        )
        expect(body.detail).toContain(named)
        expect(text).not.toMatch(/4111[ -]?1111/)
      }
    })

    it('ends a stream whose chunk has a read field of another type: 502 before anything was sent, an error event after', async () => {
      const shell = { id: 'chatcmpl-upstream', object: 'chat.completion.chunk', created: 1, model: 'u' }
      const piece = (delta: object, choice: object = {}) => ({
        ...shell,
        choices: [{ index: 0, delta, finish_reason: null, ...choice }],
      })
      const wrong: [object, string][] = [
        [piece({ content: 4111111111111111 }), 'choices/0/delta/content that is a number'],
        [piece({ content: ['4111'] }), 'choices/0/delta/content that is an array'],
        [piece({}, { text: '4111 1111 1111 1111' }), 'choices/0/text'],
        [
          piece({
            tool_calls: [
              {
                id: 'c',
                type: 'function',
                function: { name: 'pay', arguments: '{"card": "4111 1111 1111 1111"}' },
              },
            ],
          }),
          'choices/0/delta/tool_calls/0 without an index',
        ],
        [
          piece({ tool_calls: [{ index: 0, function: { arguments: { card: '4111' } } }] }),
          'choices/0/delta/tool_calls/0/function/arguments that are an object',
        ],
      ]
      for (const [bad, named] of wrong) {
        // First: nothing was sent yet, buffered or released.
        for (const ask of [postBuffered, post]) {
          double.script({ chunks: [bad, piece({}, { finish_reason: 'stop' })] })
          const res = await ask('support-bot', { model: 'm', stream: true, messages: user('x') })
          const text = await res.clone().text()
          const body = await expectProblem(res, 502, 'upstream_error')
          expect(body.detail).toContain('streamed a chunk that Warden cannot relay')
          expect(body.detail).toContain(named)
          expect(text).not.toMatch(/4111[ -]?1111/)
        }
        // After a first good chunk, a released stream ends with an error event and no [DONE].
        double.script({
          chunks: [piece({ role: 'assistant', content: 'Hello' }), bad, piece({}, { finish_reason: 'stop' })],
        })
        const started = await post('support-bot', { model: 'm', stream: true, messages: user('x') })
        expect(started.status).toBe(200)
        const text = await started.text()
        expect(text).not.toContain('[DONE]')
        expect(text).not.toMatch(/4111[ -]?1111/)
        expect(eventsOf(text).at(-1).error).toMatchObject({ code: 'upstream_error' })
        expect(eventsOf(text).at(-1).error.message).toContain(named)
      }
    })

    it('answers 502 for an answer that is not a completion, and for an error mid-stream', async () => {
      double.script(
        { raw: 'hello', contentType: 'text/plain' },
        { json: { choices: 'nope' } },
        { chunks: [chunksOf('partial')[0], { error: { message: 'overloaded' } }] },
        { chunks: chunksOf('cut short').slice(0, 2), done: false },
      )
      const ask = (stream: boolean) =>
        (stream ? postBuffered : post)('support-bot', { model: 'm', stream, messages: user('x') })
      expect((await expectProblem(await ask(false), 502, 'upstream_error')).detail).toMatch(/not JSON/)
      expect((await expectProblem(await ask(false), 502, 'upstream_error')).detail).toBe(
        'The model provider answered a chat completion that Warden cannot relay: it has choices that are a string, not an array',
      )
      expect((await expectProblem(await ask(true), 502, 'upstream_error')).detail).toMatch(
        /mid-stream: overloaded/,
      )
      expect((await expectProblem(await ask(true), 502, 'upstream_error')).detail).toMatch(
        /before the reply was complete/,
      )
      // Released as it grows, a stream already started ends with an error event and no [DONE].
      double.script({ chunks: [...chunksOf('partial').slice(0, 2), { error: { message: 'overloaded' } }] })
      const started = await post('support-bot', { model: 'm', stream: true, messages: user('x') })
      expect(started.status).toBe(200)
      const body = await started.text()
      expect(body).not.toContain('[DONE]')
      expect(eventsOf(body).at(-1)).toEqual({
        error: {
          message: 'The model provider failed mid-stream: overloaded',
          type: 'upstream_error',
          param: null,
          code: 'upstream_error',
        },
      })
    })

    it('answers 502 for a reply nested deeper than 64 levels, which could not be sent on, streamed or not', async () => {
      const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`
      const reply = JSON.stringify(completion('fine')).replace(/}$/, `,"extra":${deep}}`)
      const chunk = JSON.stringify(chunksOf('fine').at(-1)).replace(/}$/, `,"extra":${deep}}`)
      double.script(
        { raw: reply, contentType: 'application/json' },
        { raw: `data: ${chunk}\n\ndata: [DONE]\n\n`, contentType: 'text/event-stream' },
      )
      const plain = await expectProblem(
        await post('support-bot', { model: 'm', messages: user('x') }),
        502,
        'upstream_error',
      )
      expect(plain.detail).toBe('The model provider answered JSON nested deeper than 64 levels')
      const streamed = await expectProblem(
        await post('support-bot', { model: 'm', stream: true, messages: user('x') }),
        502,
        'upstream_error',
      )
      expect(streamed.detail).toBe('The model provider streamed JSON nested deeper than 64 levels')
    })

    it('answers 502 when the upstream cannot be reached', async () => {
      const body = await expectProblem(
        await post('unreachable', { messages: user('x') }),
        502,
        'upstream_error',
      )
      expect(body.detail).toBe('Could not reach the model provider (ECONNREFUSED)')
    })

    it('keeps a body that cannot be serialised apart from network failures, and sends nothing', async () => {
      let deep: Record<string, unknown> = {}
      for (let i = 0; i < 100_000; i++) deep = { a: deep }
      for (const unsendable of [{ seed: 1n }, { metadata: deep }]) {
        const call = callUpstream({
          upstream: { baseUrl: double.baseUrl, apiKey: UPSTREAM_KEY },
          body: { model: 'm', messages: user('x'), ...unsendable },
          stream: false,
          timeoutMs: 1000,
        })
        await expect(call).rejects.toMatchObject({
          status: 500,
          code: 'internal_error',
          detail: 'The request could not be serialised for the model provider; the provider was not called',
        })
      }
      expect(double.received).toHaveLength(0)
    })

    it('sends a call again on a new connection when the provider dropped the kept-alive one as it was reused', async () => {
      for (let i = 0; i < 3; i++) {
        const res = await post('resetting', { messages: user('Where is my order?') })
        expect(res.status, await res.clone().text()).toBe(200)
        const body = (await res.json()) as { choices: { message: { content: string } }[] }
        expect(body.choices[0]?.message.content).toBe('Your order ships on Thursday.')
      }
      expect(resetAnswers).toBe(3)
    })
  })

  describe('an upstream that falls silent', () => {
    // A Warden of its own with PROVIDER_TIMEOUT_MS=400: a silent upstream ends a call soon, and
    // the other tests keep the default, which no busy machine runs into.
    let tight: TestApp
    let tightBase: string
    const postTight = (body: unknown) => post('support-bot', body, tight.adminKey, tightBase)
    beforeAll(async () => {
      tight = await createTestApp(kind, {
        PROVIDER_DOUBLE_BASE_URL: double.baseUrl,
        PROVIDER_DOUBLE_API_KEY: UPSTREAM_KEY,
        PROVIDER_TIMEOUT_MS: '400',
      })
      await tight.app.listen({ port: 0, host: '127.0.0.1' })
      tightBase = `http://127.0.0.1:${(tight.app.server.address() as AddressInfo).port}`
      for (const [url, payload] of [
        [
          '/v1/applications',
          { id: 'support-bot', name: 'S', description: '', provider: 'double', model: 'm' },
        ],
        [
          '/v1/applications/support-bot/policies',
          {
            id: 'no-pii',
            rules: [{ type: 'pii', flagged: ['credit_card', 'api_key'] }],
            target: ['input', 'output'],
            override_response: OVERRIDE,
          },
        ],
      ] as const) {
        const res = await tight.request({ method: 'POST', url, payload })
        expect(res.statusCode, res.body).toBe(201)
      }
    })
    afterAll(async () => {
      await tight?.close()
    })

    it('answers 504 upstream_timeout when the upstream is silent, streamed or not', async () => {
      // The upstream never answers, or stops: only the timeout can end these calls.
      double.script({ hang: true }, { chunks: chunksOf('half of it'), hang: true })
      const plain = await expectProblem(
        await postTight({ model: 'm', messages: user('x') }),
        504,
        'upstream_timeout',
      )
      expect(plain.detail).toBe('The model provider did not answer within 400 ms')
      const streamed = await postBuffered(
        'support-bot',
        { model: 'm', stream: true, messages: user('x') },
        tight.adminKey,
        tightBase,
      )
      const text = await streamed.clone().text()
      const buffered = await expectProblem(streamed, 504, 'upstream_timeout')
      expect(buffered.detail).toBe('The model provider was silent for 400 ms')
      expect(text).not.toContain('half')
      // Released as it grows: silence before the first chunk is a 504; silence after it ends the
      // stream with an error event.
      double.script({ hang: true })
      await expectProblem(
        await postTight({ model: 'm', stream: true, messages: user('x') }),
        504,
        'upstream_timeout',
      )
      double.script({ chunks: chunksOf('half of it'), hang: true })
      const cut = await (await postTight({ model: 'm', stream: true, messages: user('x') })).text()
      expect(cut).toContain('half')
      expect(cut).not.toContain('[DONE]')
      expect(eventsOf(cut).at(-1).error).toMatchObject({ type: 'upstream_timeout', code: 'upstream_timeout' })
    })

    it('shows the SDK the timeout as a 504', async () => {
      double.script({ hang: true })
      const timeout = await sdkError(
        sdk('support-bot', tight.adminKey, tightBase).chat.completions.create({
          model: 'm',
          messages: user('x'),
        }),
      )
      expect(seen(timeout)).toEqual({
        message: '504 The model provider did not answer within 400 ms',
        status: 504,
        type: 'upstream_timeout',
        code: 'upstream_timeout',
        param: null,
      })
    })

    // What the silence is measured on, with Warden's timers on a clock the test moves: real time
    // plays no part, so a busy machine changes nothing. A buffered stream is read by the same
    // streamUpstream (callUpstream gathers its chunks).
    const upstreamStream = () =>
      streamUpstream({
        upstream: { baseUrl: double.baseUrl, apiKey: UPSTREAM_KEY },
        body: { model: 'm', stream: true, messages: user('x') },
        timeoutMs: 1000,
      })
    const pushedStream = () => new Promise<PushedStream>((resolve) => double.script({ pushed: resolve }))

    it('bounds a stream by its silences, not its length: never silent for the timeout, it runs to its end', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
      try {
        const opened = pushedStream()
        const reader = upstreamStream()
        let next = reader.next()
        const stream = await opened
        const chunks = chunksOf('slow but steady words', { size: 2 })
        let text = ''
        for (const chunk of chunks) {
          stream.write(chunk)
          // Warden has read the chunk: its clock stopped. Asking for the next starts it again, and
          // nine tenths of the timeout pass before the next chunk is sent.
          const read = await next
          expect(read.done).toBe(false)
          text += JSON.parse((read.value as StreamChunk).raw).choices[0]?.delta?.content ?? ''
          next = reader.next()
          vi.advanceTimersByTime(900)
        }
        stream.end()
        expect(await next).toEqual({ done: true, value: undefined })
        // 13 chunks: more than eleven timeouts in all.
        expect(text).toBe('slow but steady words')
      } finally {
        vi.useRealTimers()
      }
    })

    it('ends a stream silent for the timeout with upstream_timeout, and hangs up on the upstream', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
      try {
        const opened = pushedStream()
        const hungUp = double.nextHangUp()
        const reader = upstreamStream()
        let next = reader.next()
        const stream = await opened
        const [first, second] = chunksOf('half of it')
        stream.write(first)
        expect((await next).done).toBe(false)
        next = reader.next()
        vi.advanceTimersByTime(900)
        stream.write(second)
        expect((await next).done).toBe(false)
        next = reader.next()
        vi.advanceTimersByTime(1000)
        await expect(next).rejects.toMatchObject({
          code: 'upstream_timeout',
          detail: 'The model provider was silent for 1000 ms',
        })
        await hungUp
      } finally {
        vi.useRealTimers()
      }
    })
  })

  describe('configuration and validation', () => {
    it('answers 422 naming a provider without a configured upstream', async () => {
      const body = await expectProblem(
        await post('elsewhere', { messages: user('x') }),
        422,
        'validation_error',
      )
      expect(body.detail).toBe('Provider "azure-eu" has no configured upstream')
      expect(body.errors).toEqual([
        {
          pointer: '#/path/application_id',
          detail:
            'provider "azure-eu" of application "elsewhere" has no configured upstream: set PROVIDER_AZURE_EU_BASE_URL (and PROVIDER_AZURE_EU_API_KEY; PROVIDER_AZURE_EU_WORKSPACES names the workspaces that may use it)',
        },
      ])
    })

    it('answers 422 for an application without a provider, and for a missing model', async () => {
      const none = await expectProblem(
        await post('no-provider', { messages: user('x') }),
        422,
        'validation_error',
      )
      expect(none.errors?.[0]?.pointer).toBe('#/path/application_id')
      expect(none.errors?.[0]?.detail).toMatch(/has no provider/)
      const noModel = await expectProblem(
        await post('plain', { messages: user('x') }),
        422,
        'validation_error',
      )
      expect(noModel.errors).toEqual([
        { pointer: '/model', detail: 'is required: application "plain" has no model to default to' },
      ])
      expect(double.received).toHaveLength(0)
    })

    it('rejects fields outside OpenAI’s API, at the top and in a message, and bad types', async () => {
      const top = await expectProblem(
        await post('support-bot', { messages: user('x'), treshold: 1 }),
        422,
        'validation_error',
      )
      expect(top.errors).toEqual([{ pointer: '/treshold', detail: 'is not a known field' }])
      const inner = await expectProblem(
        await post('support-bot', { messages: [{ role: 'user', contnet: 'x' }] }),
        422,
        'validation_error',
      )
      expect(inner.errors?.map((e) => e.pointer)).toContain('/messages/0/contnet')
      const types = await expectProblem(
        await post('support-bot', { messages: [{ role: 'robot', content: 'x' }], n: 0, stream: 'yes' }),
        422,
        'validation_error',
      )
      expect(types.errors?.map((e) => e.pointer).sort()).toEqual(['/messages/0/role', '/n', '/stream'])
      await expectProblem(await post('support-bot', { messages: [] }), 422, 'validation_error')
      expect(double.received).toHaveLength(0)
    })
  })

  describe('errors the OpenAI SDK reads', () => {
    it('shows the detail of a provider without a configured upstream, with its pointer as param', async () => {
      const error = await sdkError(
        sdk('elsewhere').chat.completions.create({ model: '', messages: user('x') }),
      )
      expect(seen(error)).toEqual({
        message: '422 Provider "azure-eu" has no configured upstream',
        status: 422,
        type: 'validation_error',
        code: 'validation_error',
        param: '#/path/application_id',
      })
      expect(error.requestID).toMatch(/^[0-9a-f-]{36}$/)
      // The problem+json members are all there too, for clients that read them.
      const res = await post('elsewhere', { messages: user('x') })
      const body = await expectProblem(res, 422, 'validation_error')
      expect(Object.keys(body).sort()).toEqual([
        'code',
        'detail',
        'error',
        'errors',
        'request_id',
        'status',
        'title',
        'type',
      ])
      expect(body).toMatchObject({ type: '/problems/validation-error', title: 'Request is invalid' })
    })

    it('names an unknown field, and a missing model', async () => {
      const unknown = await sdkError(
        client.chat.completions.create({ model: 'm', messages: user('x'), treshold: 1 } as never),
      )
      expect(seen(unknown)).toEqual({
        message: '422 /treshold is not a known field',
        status: 422,
        type: 'validation_error',
        code: 'validation_error',
        param: '/treshold',
      })
      const noModel = await sdkError(sdk('plain').chat.completions.create({ model: '', messages: user('x') }))
      expect(noModel.message).toBe('422 /model is required: application "plain" has no model to default to')
      expect(noModel.param).toBe('/model')
      expect(double.received).toHaveLength(0)
    })

    it('shows why a key is refused, and an unknown application', async () => {
      const unknownKey = await sdkError(
        sdk('support-bot', 'wdn_unknown').chat.completions.create({ model: 'm', messages: user('x') }),
      )
      expect(seen(unknownKey)).toEqual({
        message: '401 The API key is unknown, revoked or expired',
        status: 401,
        type: 'unauthenticated',
        code: 'unauthenticated',
        param: null,
      })
      const reader = await t.key(['evaluations:read'])
      const forbidden = await sdkError(
        sdk('support-bot', reader).chat.completions.create({ model: 'm', messages: user('x') }),
      )
      expect(seen(forbidden)).toMatchObject({
        message: '403 This API key lacks the scope evaluations:write',
        status: 403,
        code: 'forbidden',
      })
      const missing = await sdkError(
        sdk('missing').chat.completions.create({ model: 'm', messages: user('x') }),
      )
      expect(seen(missing)).toEqual({
        message: '404 No application "missing" in this workspace',
        status: 404,
        type: 'not_found',
        code: 'not_found',
        param: null,
      })
    })

    it('shows the upstream’s failure, streamed or not (its timeout: an upstream that falls silent)', async () => {
      const failing = { json: { error: { message: 'The server had an error' } }, status: 500 }
      double.script(failing, { chunks: [chunksOf('partial')[0], { error: { message: 'overloaded' } }] })
      const upstream = await sdkError(client.chat.completions.create({ model: 'm', messages: user('x') }))
      expect(seen(upstream)).toEqual({
        message: '502 The model provider answered HTTP 500: The server had an error',
        status: 502,
        type: 'upstream_error',
        code: 'upstream_error',
        param: null,
      })
      // A stream already started reports the failure in an error event, which the SDK throws.
      const midStream = await sdkError(
        (async () => {
          for await (const _ of await client.chat.completions.create({
            model: 'm',
            stream: true,
            messages: user('x'),
          })) {
            // read on
          }
        })(),
      )
      expect(midStream.message).toContain('The model provider failed mid-stream: overloaded')
      expect(midStream.code).toBe('upstream_error')
      const unreachable = await sdkError(
        sdk('unreachable').chat.completions.create({ model: '', messages: user('x') }),
      )
      expect(unreachable.message).toBe('502 Could not reach the model provider (ECONNREFUSED)')
    })

    it('shows Fastify’s own refusals: a body over the route’s limit, not JSON, or not sent as JSON', async () => {
      const tooLarge = await sdkError(
        client.chat.completions.create({ model: 'm', messages: user('x'.repeat(2 * 1024 * 1024)) }),
      )
      expect(seen(tooLarge)).toEqual({
        message: "413 The request body is larger than this route's limit of 2 MiB (2097152 bytes)",
        status: 413,
        type: 'payload_too_large',
        code: 'payload_too_large',
        param: null,
      })
      /** A client whose requests are altered on their way out. */
      const altered = (change: (init: RequestInit) => RequestInit) =>
        new OpenAI({
          apiKey: t.adminKey,
          baseURL: `${base}/v1/applications/support-bot`,
          maxRetries: 0,
          fetch: (url, init) => fetch(url, change(init ?? {})),
        })
      const truncated = await sdkError(
        altered((init) => ({ ...init, body: String(init.body).slice(0, 20) })).chat.completions.create({
          model: 'm',
          messages: user('x'),
        }),
      )
      expect(truncated.status).toBe(400)
      expect(truncated.code).toBe('malformed_request')
      expect(truncated.message).toMatch(/^400 The request body is not valid JSON: /)
      const asText = await sdkError(
        altered((init) => {
          const headers = new Headers(init.headers)
          headers.set('content-type', 'text/plain')
          return { ...init, headers }
        }).chat.completions.create({ model: 'm', messages: user('x') }),
      )
      expect(seen(asText)).toEqual({
        message: '415 Send the body as JSON with Content-Type: application/json',
        status: 415,
        type: 'unsupported_media_type',
        code: 'unsupported_media_type',
        param: null,
      })
      expect(double.received).toHaveLength(0)
    })

    it('keeps OpenAI’s member to this route: other routes answer plain problem+json', async () => {
      const res = await fetch(`${base}/v1/applications/missing/evaluations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminKey}` },
        body: JSON.stringify({ messages: user('x') }),
      })
      expect(res.status).toBe(404)
      expect(await res.json()).not.toHaveProperty('error')
    })
  })

  describe('nesting depth', () => {
    /** `{"a":{"a":…1…}}`, `depth` objects deep, as JSON text. */
    const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
    const DEEP = nested(10_000)
    const MESSAGES = '"messages":[{"role":"user","content":"x"}]'
    /** Where each field passed on as sent sits, as JSON text with `@` for the value, and its pointer. */
    const places: [string, string][] = [
      ...[
        'metadata',
        'response_format',
        'logit_bias',
        'tool_choice',
        'function_call',
        'audio',
        'prediction',
        'stream_options',
        'web_search_options',
        'prompt_cache_options',
        'moderation',
      ].map((field): [string, string] => [`{${MESSAGES},"${field}":@}`, `/${field}`]),
      [
        `{${MESSAGES},"tools":[{"type":"function","function":{"name":"f","parameters":@}}]}`,
        '/tools/0/function/parameters',
      ],
      [`{${MESSAGES},"tools":[@]}`, '/tools/0'],
      [`{${MESSAGES},"functions":[{"name":"f","parameters":@}]}`, '/functions/0/parameters'],
      [
        `{${MESSAGES},"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":@}}}`,
        '/response_format/json_schema/schema',
      ],
      [
        '{"messages":[{"role":"user","content":[{"type":"text","text":"x","extra":@}]}]}',
        '/messages/0/content/0/extra',
      ],
      [
        '{"messages":[{"role":"user","content":[{"type":"image_url","image_url":@}]}]}',
        '/messages/0/content/0/image_url',
      ],
      ['{"messages":[{"role":"user","content":[@]}]}', '/messages/0/content/0'],
      [
        '{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":@}]}]}',
        '/messages/0/tool_calls/0/function',
      ],
      ['{"messages":[{"role":"assistant","content":null,"audio":@}]}', '/messages/0/audio'],
      ['{"messages":[{"role":"assistant","content":null,"function_call":@}]}', '/messages/0/function_call'],
    ]
    /** The pointer of the first value past 64 levels under `at`, the body being the first level. */
    const tooDeepUnder = (at: string) => at + '/a'.repeat(64 - at.split('/').length + 1)

    it('answers 422 pointing at the value past 64 levels, 10,000 deep in every field passed on, and calls no upstream', async () => {
      for (const [template, at] of places) {
        const body = await expectProblem(
          await postText('support-bot', template.replace('@', DEEP)),
          422,
          'validation_error',
        )
        const pointer = tooDeepUnder(at)
        expect(body.errors, at).toEqual([{ pointer, detail: 'is nested deeper than 64 levels' }])
        expect(body.detail).toBe(`${pointer} is nested deeper than 64 levels`)
      }
      // Arrays count as objects do.
      const arrays = await expectProblem(
        await postText(
          'support-bot',
          `{${MESSAGES},"tools":[{"type":"function","function":{"name":"f","parameters":{"enum":${'['.repeat(10_000)}${']'.repeat(10_000)}}}}]}`,
        ),
        422,
        'validation_error',
      )
      expect(arrays.errors?.[0]?.pointer).toBe(`/tools/0/function/parameters/enum${'/0'.repeat(59)}`)
      expect(double.received).toHaveLength(0)
    })

    it('passes 64 levels on as sent, and refuses 65', async () => {
      // metadata is the second level: 63 objects inside it reach the 64th.
      const deepest = `{${MESSAGES},"model":"m","metadata":${nested(63)}}`
      const res = await postText('support-bot', deepest)
      expect(res.status, await res.clone().text()).toBe(200)
      expect(double.received[0]?.body.metadata).toEqual(JSON.parse(nested(63)))
      const over = await expectProblem(
        await postText('support-bot', `{${MESSAGES},"model":"m","metadata":${nested(64)}}`),
        422,
        'validation_error',
      )
      expect(over.errors?.[0]?.pointer).toBe(`/metadata${'/a'.repeat(63)}`)
      expect(double.received).toHaveLength(1)
    })

    it('shows the OpenAI SDK the pointer and the limit', async () => {
      let parameters: Record<string, unknown> = { type: 'object' }
      for (let i = 0; i < 100; i++) parameters = { properties: { a: parameters } }
      const error = await sdkError(
        client.chat.completions.create({
          model: 'm',
          messages: user('x'),
          tools: [{ type: 'function', function: { name: 'f', parameters } }],
        }),
      )
      const pointer = `/tools/0/function/parameters${'/properties/a'.repeat(30)}`
      expect(seen(error)).toEqual({
        message: `422 ${pointer} is nested deeper than 64 levels`,
        status: 422,
        type: 'validation_error',
        code: 'validation_error',
        param: pointer,
      })
    })
  })

  describe('auth and workspaces', () => {
    it('needs evaluations:write', async () => {
      await expectProblem(await post('support-bot', { messages: user('x') }, null), 401, 'unauthenticated')
      const reader = await t.key(['evaluations:read', 'applications:write', 'policies:write'])
      await expectProblem(await post('support-bot', { messages: user('x') }, reader), 403, 'forbidden')
      const writer = await t.key(['evaluations:write'])
      const data = await sdk('support-bot', writer).chat.completions.create({
        model: 'm',
        messages: user('x'),
      })
      expect(data.choices[0]?.message.content).toBe('echo: x')
    })

    it('answers 404 to another workspace, and never calls its upstream', async () => {
      const intruder = await t.key(['admin'], { workspace: 'intruder' })
      await expectProblem(await post('support-bot', { messages: user('x') }, intruder), 404, 'not_found')
      await expectProblem(await post('missing', { messages: user('x') }), 404, 'not_found')
      expect(double.received).toHaveLength(0)
    })

    it('lets only the workspaces PROVIDER_<NAME>_WORKSPACES names use that provider', async () => {
      const outsider = await t.key(['admin'], { workspace: 'outsider' })
      const created = await t.request({
        method: 'POST',
        url: '/v1/applications',
        key: outsider,
        payload: { id: 'sneaky', name: 'x', description: '', provider: 'double', model: 'm' },
      })
      expect(created.statusCode, created.body).toBe(201)
      // A provider free to every workspace: fine.
      expect((await post('sneaky', { messages: user('x') }, outsider)).status).toBe(200)
      // Moved to a provider granted to other workspaces only: refused as if it had no upstream.
      const moved = await t.request({
        method: 'PATCH',
        url: '/v1/applications/sneaky',
        key: outsider,
        headers: { 'content-type': 'application/merge-patch+json' },
        payload: { provider: 'INTERNAL' },
      })
      expect(moved.statusCode, moved.body).toBe(200)
      double.received.length = 0
      const refused = await expectProblem(
        await post('sneaky', { messages: user('x') }, outsider),
        422,
        'validation_error',
      )
      expect(refused.detail).toBe('Provider "INTERNAL" has no configured upstream')
      expect(refused.errors?.[0]?.pointer).toBe('#/path/application_id')
      expect(double.received).toHaveLength(0)
      // A granted workspace uses it, with its key.
      const partner = await t.key(['admin'], { workspace: 'partners' })
      await t.request({
        method: 'POST',
        url: '/v1/applications',
        key: partner,
        payload: { id: 'inside', name: 'x', description: '', provider: 'internal', model: 'm' },
      })
      expect((await post('inside', { messages: user('x') }, partner)).status).toBe(200)
      expect(double.received.at(-1)?.headers.authorization).toBe('Bearer sk-internal-only-for-default')
    })
  })
})

describe('POST /v1/applications/{application_id}/chat/completions over its rate limit', () => {
  let t: TestApp
  let base: string
  beforeAll(async () => {
    t = await createTestApp('sqlite', { RATE_LIMIT_PER_MINUTE: '1' })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await t?.close()
  })

  it('shows the OpenAI SDK why it was limited', async () => {
    const client = new OpenAI({ apiKey: t.adminKey, baseURL: `${base}/v1/applications/bot`, maxRetries: 0 })
    const ask = () =>
      client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).then(
        () => {
          throw new Error('the call succeeded')
        },
        (thrown: unknown) => thrown as APIError,
      )
    expect((await ask()).status).toBe(404)
    const limited = await ask()
    expect(limited).toBeInstanceOf(APIError)
    expect(limited).toMatchObject({ status: 429, type: 'rate_limited', code: 'rate_limited', param: null })
    expect(limited.message).toMatch(/^429 This API key made more than 1 requests in a minute; retry in /)
  })
})

describe('streams under scored output rules, scored on windows (sqlite)', () => {
  let t: TestApp
  let double: UpstreamDouble
  /** An OpenAI-compatible judge: 0.1 for a reply promising a refund guarantee, 0.9 else; 500 for "judge-breaker". */
  let judge: UpstreamDouble
  let base: string
  const OVERRIDE = 'Sorry, I cannot say that.'
  const sdk = (application: string) =>
    new OpenAI({ apiKey: t.adminKey, baseURL: `${base}/v1/applications/${application}`, maxRetries: 0 })
  /** The texts of a streamed reply, piece by piece, its finish reason and its last chunk. */
  const read = async (application: string, options: { stopAt?: string } = {}) => {
    const pieces: string[] = []
    let finish: string | null = null
    let last: any = null
    for await (const chunk of await sdk(application).chat.completions.create({
      model: 'm',
      stream: true,
      messages: [{ role: 'user', content: 'Tell me about my order.' }],
    })) {
      const content = chunk.choices[0]?.delta.content ?? ''
      if (content !== '') pieces.push(content)
      finish = chunk.choices[0]?.finish_reason ?? finish
      last = chunk
      if (options.stopAt !== undefined && pieces.join('').includes(options.stopAt)) break
    }
    return { pieces, text: pieces.join(''), finish, last }
  }
  const create = async (url: string, payload: object) => {
    const res = await t.request({ method: 'POST', url, payload })
    expect(res.statusCode, res.body).toBe(201)
  }
  const judged = (asked: string) => {
    const request = JSON.parse(asked) as { messages: { content: string }[] }
    return request.messages.map((m) => m.content).join('\n')
  }

  beforeAll(async () => {
    double = await startUpstreamDouble()
    judge = await startUpstreamDouble()
    judge.fallback = (request) => {
      const asked = judged(JSON.stringify(request.body))
      if (asked.includes('judge-breaker')) return { json: { error: { message: 'judge down' } }, status: 500 }
      const score = asked.includes('refund guarantee') ? 0.1 : 0.9
      return { json: completion(JSON.stringify({ score, reason: 'Judged by the double.' })) }
    }
    t = await createTestApp('sqlite', {
      PROVIDER_DOUBLE_BASE_URL: double.baseUrl,
      STREAM_WINDOW_CHARS: '20',
      JUDGE_BASE_URL: judge.baseUrl,
      JUDGE_MODEL: 'judge-model',
      // Nothing here is about timeouts: a judge slowed by a busy machine still answers in time.
      JUDGE_TIMEOUT_MS: '60000',
    })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const app = async (id: string, policy: object) => {
      await create('/v1/applications', { id, name: id, description: '', provider: 'double', model: 'm' })
      await create(`/v1/applications/${id}/policies`, {
        id: `${id}-policy`,
        target: ['output'],
        override_response: OVERRIDE,
        ...policy,
      })
    }
    await app('toxic-guard', { rules: [{ type: 'toxicity', detector: 'model' }] })
    const custom = { rules: [{ type: 'custom' }], definition: 'The reply never promises money back.' }
    await app('custom-guard', custom)
    await app('custom-open', { ...custom, on_error: 'fail_open' })
  })
  afterAll(async () => {
    await t?.close()
    await double?.close()
    await judge?.close()
  })
  beforeEach(() => {
    double.received.length = 0
    judge.received.length = 0
  })

  it('holds a tool call’s arguments back until the whole reply passed the judged rules', async () => {
    const base_ = { id: 'chatcmpl-upstream', object: 'chat.completion.chunk', created: 1, model: 'u' }
    const piece = (delta: object, finish: string | null = null) => ({
      ...base_,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    })
    const callChunks = (args: string) => [
      piece({ role: 'assistant', content: null }),
      piece({
        tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'refund', arguments: '' } }],
      }),
      ...[...args].map((c) => piece({ tool_calls: [{ index: 0, function: { arguments: c } }] })),
      piece({}, 'tool_calls'),
    ]
    const stream = async (args: string) => {
      double.script({ chunks: callChunks(args) })
      const res = await fetch(`${base}/v1/applications/custom-guard/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminKey}` },
        body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'Refund?' }] }),
      })
      return (await res.text())
        .split('\n\n')
        .filter((e) => e.startsWith('data: {'))
        .map((e) => JSON.parse(e.slice(6)))
    }
    const args = '{"order": 1042, "note": "late delivery"}'
    const passed = await stream(args)
    const withArguments = passed.filter((e) =>
      (e.choices?.[0]?.delta?.tool_calls ?? []).some((c: any) => (c.function?.arguments ?? '') !== ''),
    )
    // Nothing of the call before the end: the whole call with the last chunk, which says why it ended.
    expect(withArguments).toHaveLength(1)
    expect(withArguments[0]).toBe(passed.at(-1))
    expect(passed.flatMap((e) => e.choices?.[0]?.delta?.tool_calls ?? [])).toEqual([
      { index: 0, id: 'c1', type: 'function', function: { name: 'refund', arguments: args } },
    ])
    expect(passed.at(-1).choices[0].finish_reason).toBe('tool_calls')
    expect(passed.at(-1).warden).toMatchObject({ action: 'allow', failed: [] })

    const failed = await stream('{"order": 1042, "note": "refund guarantee"}')
    expect(JSON.stringify(failed)).not.toContain('guarantee')
    expect(failed.at(-1).choices[0]).toMatchObject({
      delta: { content: OVERRIDE },
      finish_reason: 'content_filter',
    })
    expect(failed.at(-1).warden.failed).toEqual([
      expect.objectContaining({ policy_id: 'custom-guard-policy', rule_type: 'custom', categories: [] }),
    ])
  })

  it('never sends a threat written mid-stream, which the offline model scores on its window', async () => {
    const text =
      'Thanks for your message. I know where you live and I will make you regret this. Have a nice day.'
    double.script({ chunks: chunksOf(text, { size: 3 }), gapMs: 2 })
    const { text: received, finish, last } = await read('toxic-guard')
    // The first window passed and was sent; the second failed: nothing of it reached the client.
    expect(received).toBe(`Thanks for your message.${OVERRIDE}`)
    expect(received).not.toContain('live')
    expect(finish).toBe('content_filter')
    expect(last.warden).toMatchObject({ action: 'override' })
    // The client reads which rule failed: the toxicity rule that scored the window.
    expect(last.warden.failed).toEqual([
      expect.objectContaining({ evaluation: 'output', choice: 0, rule_index: 0, rule_type: 'toxicity' }),
    ])
    // The log holds the evaluation of the whole text received.
    const entry = await t.request({
      method: 'GET',
      url: `/v1/applications/toxic-guard/evaluations/${last.warden.output_evaluation_id}`,
    })
    expect(entry.statusCode).toBe(200)
    expect(entry.json()).toMatchObject({ source: 'chat_output', verdict: 'fail' })
    expect(entry.json().policies[0].rules[0]).toMatchObject({
      type: 'toxicity',
      method: 'model',
      status: 'fail',
    })
  })

  it('releases a clean long reply window by window before the upstream finished', async () => {
    const sentences = [
      'Your order ships on Monday.',
      ' It should arrive within three business days.',
      ' You can track the parcel from the link in your email.',
      ' Our team is happy to help with any question.',
    ]
    double.script({ chunks: chunksOf(sentences.join(''), { size: 5 }), gapMs: 1, hang: true })
    // The upstream never finishes: what arrives was released by the windows that passed.
    const { pieces, text } = await read('toxic-guard', { stopAt: 'business days.' })
    expect(sentences.join('').startsWith(text)).toBe(true)
    expect(text.startsWith(`${sentences[0]}${sentences[1]}`)).toBe(true)
    // Each piece sent is a whole window: it ends at a sentence's end.
    for (const piece of pieces) expect(piece).toMatch(/\.$/)
  })

  it('asks the judge once per window, releases what passed, and stops at a window that fails', async () => {
    const clean = 'Your order ships on Monday. It should arrive within three business days. Thanks!'
    double.script({ chunks: chunksOf(clean, { size: 4 }) })
    const passed = await read('custom-guard')
    expect(passed.text).toBe(clean)
    expect(passed.finish).toBe('stop')
    expect(passed.last.warden).toMatchObject({ action: 'allow' })
    // Three windows, each with the one before as context, and the whole text for the log.
    const asked = judge.received.map((r) => judged(JSON.stringify(r.body)))
    expect(asked).toHaveLength(4)
    expect(asked[1]).toContain('Your order ships on Monday. It should arrive within three business days.')
    // The last window and the whole text are judged concurrently, in either order.
    expect(
      asked.filter((a) => a.includes('three business days. Thanks!') && !a.includes('Monday')),
    ).toHaveLength(1)

    judge.received.length = 0
    const promise = 'Your order ships on Monday. We offer a refund guarantee on it. Thanks!'
    double.script({ chunks: chunksOf(promise, { size: 4 }), gapMs: 2 })
    const stopped = await read('custom-guard')
    expect(stopped.text).toBe(`Your order ships on Monday.${OVERRIDE}`)
    expect(stopped.finish).toBe('content_filter')
    expect(stopped.last.warden).toMatchObject({ action: 'override' })
  })

  it('counts a judge error on a window by the policy’s on_error', async () => {
    const breaking = 'Your order ships on Monday. The judge-breaker is in this window. Thanks!'
    double.script({ chunks: chunksOf(breaking, { size: 4 }) })
    const closed = await read('custom-guard')
    expect(closed.text).toBe(`Your order ships on Monday.${OVERRIDE}`)
    expect(closed.finish).toBe('content_filter')

    double.script({ chunks: chunksOf(breaking, { size: 4 }) })
    const open = await read('custom-open')
    expect(open.text).toBe(breaking)
    expect(open.last.warden).toMatchObject({ action: 'allow' })
  })
})
