import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import {
  evaluationSpan,
  inSpan,
  modelCallSpan,
  recordEvaluation,
  recordUsage,
  ruleSpan,
  startTelemetry,
  type Telemetry,
  tracingOn,
  withContext,
} from '../../src/telemetry/index.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver.js'
import {
  chunksOf,
  completion,
  response,
  responseEvents,
  startUpstreamDouble,
  type UpstreamDouble,
} from '../helpers/upstream-double.js'

describe('tracing off', () => {
  it('runs each function and records nothing', async () => {
    expect(tracingOn()).toBe(false)
    expect(inSpan('x', {}, (span) => span)).toBeUndefined()
    expect(await evaluationSpan('bot', 'api', async (span) => span)).toBeUndefined()
  })
})

describe('traces exported over OTLP/HTTP', () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>
  let telemetry: Telemetry
  let t: TestApp
  let double: UpstreamDouble
  let judge: UpstreamDouble

  beforeAll(async () => {
    double = await startUpstreamDouble()
    judge = await startUpstreamDouble()
    judge.fallback = () => ({
      json: completion(JSON.stringify({ score: 0.9, reason: 'On topic.' }), {
        model: 'judge-model-2026',
        usage: { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129 },
      }),
    })
    receiver = await startOtlpReceiver()
    const started = startTelemetry(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SERVICE_NAME: 'warden-test',
        TRACING_GUARDRAIL_ATTRIBUTES: 'true',
      }).tracing,
    )
    if (!started) throw new Error('tracing did not start')
    telemetry = started
    t = await createTestApp('sqlite', {
      PROVIDER_DOUBLE_BASE_URL: double.baseUrl,
      JUDGE_BASE_URL: judge.baseUrl,
      JUDGE_MODEL: 'judge-model',
    })
    const create = async (url: string, payload: object) => {
      const res = await t.request({ method: 'POST', url, payload })
      expect(res.statusCode, res.body).toBe(201)
    }
    await create('/v1/applications', {
      id: 'traced',
      name: 'Traced',
      description: '',
      provider: 'double',
      model: 'traced-model',
    })
    await create('/v1/applications/traced/policies', {
      id: 'no-pii',
      rules: [
        { type: 'pii', flagged: ['credit_card'] },
        { type: 'length', value: '10000' },
      ],
      target: ['input', 'output'],
    })
  })
  afterAll(async () => {
    await t.close()
    await double.close()
    await judge.close()
    await telemetry.shutdown()
    await receiver.close()
  })

  /** The spans of one trace, once its server span (which ends last) was exported. */
  async function traceSpans(traceId: string): Promise<ReceivedSpan[]> {
    await telemetry.flush()
    await receiver.spanWhere((s) => s.traceId === traceId && s.kind === 2)
    await telemetry.flush()
    return receiver.spans.filter((s) => s.traceId === traceId)
  }
  /** Those of `secrets` found anywhere in what was exported so far: names, attributes, events, statuses. */
  const leaked = (...secrets: string[]) => {
    const exported = receiver.bodies.join('\n')
    return secrets.filter((secret) => exported.includes(secret))
  }
  let traces = 0
  /** A fresh trace id and its `traceparent` header. */
  const newTrace = () => {
    const traceId = `7a0e${String(++traces).padStart(28, '0')}`
    return { traceId, headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } }
  }

  it('continues the caller’s W3C trace with a server span per request', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    const parent = '00f067aa0ba902b7'
    const res = await t.request({
      method: 'GET',
      url: '/v1/applications?limit=1',
      headers: { traceparent: `00-${traceId}-${parent}-01` },
    })
    expect(res.statusCode).toBe(200)
    await telemetry.flush()
    const span = await receiver.spanNamed('GET /v1/applications')
    expect(span).toMatchObject({ traceId, parentSpanId: parent, kind: 2 })
    expect(span.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/v1/applications',
      'url.path': '/v1/applications',
      'http.response.status_code': 200,
      'warden.workspace.id': t.workspaceId,
    })
    expect(span.resource['service.name']).toBe('warden-test')
  })

  it('nests the helpers’ spans, with GenAI and guardrail attributes', async () => {
    await evaluationSpan('bot', 'chat_input', async (evaluation) => {
      ruleSpan('no-pii', 0, 'pii', () => undefined)
      await modelCallSpan({ operation: 'chat', provider: 'openai', model: 'gpt-4o-mini' }, async (call) => {
        recordUsage(call, { prompt_tokens: 12, completion_tokens: 5 }, 'gpt-4o-mini-2024-07-18')
      })
      recordEvaluation(evaluation, { id: 'e1', verdict: 'fail', action: 'block', failedPolicies: ['no-pii'] })
    })
    await telemetry.flush()
    const evaluation = await receiver.spanNamed('warden.evaluation')
    const rule = await receiver.spanNamed('warden.rule')
    const call = await receiver.spanNamed('chat gpt-4o-mini')
    expect(rule.parentSpanId).toBe(evaluation.spanId)
    expect(call.parentSpanId).toBe(evaluation.spanId)
    expect(call.kind).toBe(3)
    expect(call.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 5,
      'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
    })
    expect(evaluation.attributes).toMatchObject({
      'warden.application.id': 'bot',
      'warden.evaluation.source': 'chat_input',
      'warden.evaluation.action': 'block',
      'gen_ai.operation.name': 'apply_guardrail',
      'gen_ai.guardrail.decision.type': 'deny',
      'gen_ai.guardrail.policy.id': ['no-pii'],
    })
    expect(rule.attributes).toEqual({
      'warden.policy.id': 'no-pii',
      'warden.rule.index': 0,
      'warden.rule.type': 'pii',
    })
  })

  it('records a failure on the span and passes the error on', async () => {
    await expect(
      inSpan('warden.failing', {}, async () => {
        throw new Error('upstream gone')
      }),
    ).rejects.toThrow('upstream gone')
    await telemetry.flush()
    expect((await receiver.spanNamed('warden.failing')).name).toBe('warden.failing')
    expect(withContext(null, () => 1)).toBe(1)
  })

  it('shows one guarded chat completion as one trace: the evaluations, the upstream call and the rules', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c'
    const route = 'POST /v1/applications/:application_id/chat/completions'
    const traced = async (stream: boolean, parent: string) => {
      double.script(
        stream
          ? { chunks: chunksOf('Your order ships today.', { usage: true }) }
          : { json: completion('Your order ships today.') },
      )
      const res = await t.request({
        method: 'POST',
        url: '/v1/applications/traced/chat/completions',
        headers: { traceparent: `00-${traceId}-${parent}-01` },
        payload: {
          messages: [{ role: 'user', content: 'When does my order ship?' }],
          ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
        },
      })
      expect(res.statusCode, res.body).toBe(200)
      await telemetry.flush()
      // The server span ends last: once it is in, the spans it holds are too.
      await receiver.spanNamed(route)
      await telemetry.flush()
      return receiver.spans.filter((s) => s.traceId === traceId)
    }
    for (const [stream, parent] of [
      [false, '00f067aa0ba902b7'],
      [true, '00f067aa0ba902b8'],
    ] as const) {
      receiver.spans.length = 0
      const spans = await traced(stream, parent)
      const server = spans.find((s) => s.name === route)
      expect(server?.parentSpanId).toBe(parent)
      const evaluations = spans.filter((s) => s.name === 'warden.evaluation')
      expect(evaluations.map((e) => e.attributes['warden.evaluation.source']).sort()).toEqual([
        'chat_input',
        'chat_output',
      ])
      for (const evaluation of evaluations) {
        expect(evaluation.parentSpanId).toBe(server?.spanId)
        expect(evaluation.attributes).toMatchObject({
          'warden.application.id': 'traced',
          'warden.evaluation.action': 'allow',
        })
        const rules = spans.filter((s) => s.name === 'warden.rule' && s.parentSpanId === evaluation.spanId)
        expect(rules.map((r) => r.attributes)).toEqual([
          { 'warden.policy.id': 'no-pii', 'warden.rule.index': 0, 'warden.rule.type': 'pii' },
          { 'warden.policy.id': 'no-pii', 'warden.rule.index': 1, 'warden.rule.type': 'length' },
        ])
      }
      const call = spans.find((s) => s.name === 'chat traced-model')
      expect(call?.parentSpanId).toBe(server?.spanId)
      expect(call?.kind).toBe(3)
      expect(call?.attributes).toEqual({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'double',
        'gen_ai.request.model': 'traced-model',
        'gen_ai.response.model': 'upstream-model',
        'gen_ai.usage.input_tokens': 10,
        'gen_ai.usage.output_tokens': 5,
      })
      // Never a conversation's text in a span.
      expect(JSON.stringify(spans)).not.toContain('order ships')
    }
  })

  it('shows one guarded response as one trace: its evaluations and the upstream call, whole and streamed', async () => {
    const route = 'POST /v1/applications/:application_id/responses'
    for (const stream of [false, true]) {
      const { traceId, headers } = newTrace()
      double.script(
        stream
          ? { events: responseEvents('Your order ships today.') }
          : { json: response('Your order ships today.') },
      )
      const res = await t.request({
        method: 'POST',
        url: '/v1/applications/traced/responses',
        headers,
        payload: { input: 'When does my order ship?', ...(stream ? { stream: true } : {}) },
      })
      expect(res.statusCode, res.body).toBe(200)
      const spans = await traceSpans(traceId)
      const server = spans.find((s) => s.name === route)
      const sources = spans
        .filter((s) => s.name === 'warden.evaluation')
        .map((e) => e.attributes['warden.evaluation.source'])
        .sort()
      expect(sources).toEqual(['responses_input', 'responses_output'])
      const call = spans.find((s) => s.name === 'chat traced-model')
      expect(call?.parentSpanId).toBe(server?.spanId)
      expect(call?.attributes).toMatchObject({
        'gen_ai.provider.name': 'double',
        'gen_ai.usage.input_tokens': 10,
        'gen_ai.usage.output_tokens': 5,
      })
      expect(JSON.stringify(spans)).not.toContain('order ships')
    }
  })

  it('shows a judge’s call as a model call under the evaluation that asked, with its tokens', async () => {
    const create = async (url: string, payload: object) => {
      const res = await t.request({ method: 'POST', url, payload })
      expect(res.statusCode, res.body).toBe(201)
    }
    await create('/v1/applications', { id: 'judged', name: 'Judged', description: '' })
    await create('/v1/applications/judged/policies', {
      id: 'on-topic',
      rules: [{ type: 'relevance' }],
      target: ['output'],
    })
    const traceId = '5bf92f3577b34da6a3ce929d0e0e4736'
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications/judged/evaluations',
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b9-01` },
      payload: {
        messages: [
          { role: 'user', content: 'Where is my order?' },
          { role: 'assistant', content: 'It ships today.' },
        ],
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().policies[0].rules[0]).toMatchObject({ method: 'judge', status: 'pass' })
    await telemetry.flush()
    await receiver.spanNamed('POST /v1/applications/:application_id/evaluations')
    await telemetry.flush()
    const spans = receiver.spans.filter((s) => s.traceId === traceId)
    const evaluation = spans.find((s) => s.name === 'warden.evaluation')
    const call = spans.find((s) => s.name === 'chat judge-model')
    expect(evaluation?.attributes['warden.evaluation.source']).toBe('api')
    expect(call?.parentSpanId).toBe(evaluation?.spanId)
    expect(call?.kind).toBe(3)
    expect(call?.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'judge-model',
      'gen_ai.response.model': 'judge-model-2026',
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 9,
    })
  })

  it('never exports what an upstream’s error answer says: the error’s code and the status only', async () => {
    const ssn = '078-05-1120'
    const email = 'jane.roe@example.com'
    const prompt = `My SSN is ${ssn}; write to ${email}`
    for (const stream of [false, true]) {
      double.script({
        status: 400,
        json: { error: { message: `Invalid prompt: '${prompt}'`, type: 'invalid_request_error' } },
      })
      const { traceId, headers } = newTrace()
      const res = await t.request({
        method: 'POST',
        url: '/v1/applications/traced/chat/completions',
        headers,
        payload: { messages: [{ role: 'user', content: prompt }], ...(stream ? { stream: true } : {}) },
      })
      expect(res.statusCode, res.body).toBe(502)
      // The client reads what its provider said (the test's upstream did echo the prompt) …
      expect(res.json().detail).toContain(ssn)
      const spans = await traceSpans(traceId)
      const server = spans.find((s) => s.kind === 2)
      expect(server?.attributes).toMatchObject({
        'http.response.status_code': 502,
        'error.type': 'upstream_error',
      })
      expect(server?.status.code).toBe(2)
      if (!stream) {
        const call = spans.find((s) => s.name === 'chat traced-model')
        expect(call?.attributes['error.type']).toBe('upstream_error')
        expect(call?.status).toEqual({ code: 2 })
        expect(call?.events.map((e) => [e.name, e.attributes['exception.type']])).toEqual([
          ['exception', 'upstream_error'],
        ])
      }
    }
    // … the spans never: not in a name, an attribute, an event or a status.
    expect(leaked(ssn, email, 'Invalid prompt')).toEqual([])
  })

  it('caps and cleans what a client sends as its model name, in the span’s name and every attribute', async () => {
    const model = `gpt-\u202e\n\u0000${'x'.repeat(20_000)}`
    const { traceId, headers } = newTrace()
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications/traced/chat/completions',
      headers,
      payload: { model, messages: [{ role: 'user', content: 'Hello there' }] },
    })
    expect(res.statusCode, res.body).toBe(200)
    const spans = await traceSpans(traceId)
    const call = spans.find((s) => s.attributes['gen_ai.operation.name'] === 'chat')
    expect(call?.name).toMatch(/^chat gpt-\uFFFD\uFFFD\uFFFDxxx/)
    expect(call?.name.length).toBeLessThanOrEqual(128)
    expect(call?.attributes['gen_ai.request.model']).toMatch(/^gpt-\uFFFD\uFFFD\uFFFDxxx+…$/)
    for (const span of spans) {
      expect(span.name.length).toBeLessThanOrEqual(128)
      for (const value of Object.values(span.attributes))
        if (typeof value === 'string') {
          expect(value.length).toBeLessThanOrEqual(256)
          expect(value).not.toMatch(/[\p{Cc}\u202e]/u)
        }
    }
    expect(leaked('x'.repeat(300))).toEqual([])
  })

  it('records the route’s template as the path, never the path a client sent', async () => {
    const card = '4111111111111111'
    for (const [url, path] of [
      [`/v1/X-${card}`, '{unmatched}'],
      [`/v1/applications/acct-${card}?card=${card}`, '/v1/applications/{application_id}'],
    ] as const) {
      const { traceId, headers } = newTrace()
      const res = await t.request({ method: 'GET', url, headers })
      expect(res.statusCode).toBe(404)
      const [server] = await traceSpans(traceId)
      expect(server?.attributes['url.path']).toBe(path)
    }
    expect(leaked(card)).toEqual([])
  })

  it('never exports a draft’s pattern from the 422 that refuses it', async () => {
    const secret = 'sk-live-7a0b93c1'
    const { traceId, headers } = newTrace()
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications/traced/evaluations',
      headers,
      payload: {
        messages: [{ role: 'user', content: 'Hello there' }],
        draft_policies: [
          { id: 'draft', rules: [{ type: 'regex', value: `(${secret}(` }], target: ['input'] },
        ],
      },
    })
    expect(res.statusCode, res.body).toBe(422)
    expect(res.body).toContain(secret)
    const spans = await traceSpans(traceId)
    const evaluation = spans.find((s) => s.name === 'warden.evaluation')
    expect(evaluation?.attributes['error.type']).toBe('validation_error')
    expect(leaked(secret)).toEqual([])
  })

  it('exports only the documented attributes and no error’s message, whatever a span is given', async () => {
    await expect(
      inSpan('warden.custom', { 'gen_ai.prompt': 'leak-1', 'warden.application.id': 'bot' }, async (span) => {
        span?.setAttribute('user.email', 'leak-2')
        // Message content only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
        span?.setAttribute('gen_ai.input.messages', '[{"role":"user","parts":[{"content":"leak-7"}]}]')
        span?.recordException(new Error('leak-3'))
        span?.addEvent('gen_ai.user.message', { content: 'leak-4' })
        span?.setStatus({ code: 2, message: 'leak-5' })
        // JSON.parse's own messages quote the text they could not read.
        JSON.parse('{"ssn": leak-6}')
      }),
    ).rejects.toThrow(SyntaxError)
    await telemetry.flush()
    const span = await receiver.spanNamed('warden.custom')
    expect(span.attributes).toEqual({ 'warden.application.id': 'bot', 'error.type': 'SyntaxError' })
    expect(span.events.map((e) => [e.name, e.attributes['exception.type']])).toEqual([
      ['exception', 'Error'],
      ['exception', 'SyntaxError'],
    ])
    expect(span.status).toEqual({ code: 2 })
    expect(leaked('leak-')).toEqual([])
  })
})

describe('message content, with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true', () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>
  let telemetry: Telemetry
  let t: TestApp
  let double: UpstreamDouble

  beforeAll(async () => {
    double = await startUpstreamDouble()
    receiver = await startOtlpReceiver()
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      PROVIDER_DOUBLE_BASE_URL: double.baseUrl,
    }
    const started = startTelemetry(loadConfig(env).tracing)
    if (!started) throw new Error('tracing did not start')
    telemetry = started
    t = await createTestApp('sqlite', env)
    for (const [url, payload] of [
      [
        '/v1/applications',
        { id: 'captured', name: 'Captured', description: '', provider: 'double', model: 'm' },
      ],
      ['/v1/applications/captured/policies', { id: 'no-pii', rules: [{ type: 'pii' }], target: ['output'] }],
    ] as const) {
      const res = await t.request({ method: 'POST', url, payload })
      expect(res.statusCode, res.body).toBe(201)
    }
  })
  afterAll(async () => {
    await t.close()
    await double.close()
    await telemetry.shutdown()
    await receiver.close()
  })

  let traces = 0
  /** The model call's span of one chat completion, and the completion's answer. */
  async function completionCall(payload: object, headers: Record<string, string> = {}) {
    const traceId = `c0de${String(++traces).padStart(28, '0')}`
    const res = await t.request({
      method: 'POST',
      url: '/v1/applications/captured/chat/completions',
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, ...headers },
      payload,
    })
    expect(res.statusCode, res.body).toBe(200)
    await telemetry.flush()
    await receiver.spanWhere((s) => s.traceId === traceId && s.kind === 2)
    await telemetry.flush()
    const call = receiver.spans.find((s) => s.traceId === traceId && s.name === 'chat m')
    if (!call) throw new Error('no model call span')
    return call
  }
  const parsed = (value: unknown) =>
    JSON.parse(String(value)) as { role: string; parts: { content?: string }[] }[]

  it('records the messages sent and answered on the model call’s span, as the GenAI conventions write them', async () => {
    const messages = [
      { role: 'system', content: 'Answer in one line.' },
      { role: 'user', content: 'When does my order ship?' },
    ]
    for (const [stream, headers] of [
      [false, {}],
      [true, {}],
      [true, { 'x-warden-stream': 'buffered' }],
    ] as const) {
      double.script(
        stream
          ? { chunks: chunksOf('Your order ships today.') }
          : { json: completion('Your order ships today.') },
      )
      const call = await completionCall({ messages, ...(stream ? { stream: true } : {}) }, headers)
      expect(parsed(call.attributes['gen_ai.input.messages'])).toEqual([
        { role: 'system', parts: [{ type: 'text', content: 'Answer in one line.' }] },
        { role: 'user', parts: [{ type: 'text', content: 'When does my order ship?' }] },
      ])
      expect(parsed(call.attributes['gen_ai.output.messages'])).toEqual([
        {
          role: 'assistant',
          parts: [{ type: 'text', content: 'Your order ships today.' }],
          finish_reason: 'stop',
        },
      ])
    }
  })

  it('writes tool calls and tools’ results as parts of their own, a stream’s put together from its deltas', async () => {
    const base = { id: 'chatcmpl-upstream', object: 'chat.completion.chunk', created: 1, model: 'm' }
    const delta = (d: object, finish: string | null = null) => ({
      ...base,
      choices: [{ index: 0, delta: d, finish_reason: finish }],
    })
    const asked = {
      id: 'call_2',
      type: 'function',
      function: { name: 'ship_date', arguments: '{"order":"A-7"}' },
    }
    for (const stream of [false, true]) {
      double.script(
        stream
          ? {
              chunks: [
                delta({
                  role: 'assistant',
                  tool_calls: [{ index: 0, ...asked, function: { name: 'ship_date', arguments: '' } }],
                }),
                delta({ tool_calls: [{ index: 0, function: { arguments: '{"order":' } }] }),
                delta({ tool_calls: [{ index: 0, function: { arguments: '"A-7"}' } }] }),
                delta({}, 'tool_calls'),
              ],
            }
          : {
              json: completion('', {
                choices: [
                  {
                    index: 0,
                    message: { role: 'assistant', content: null, tool_calls: [asked] },
                    finish_reason: 'tool_calls',
                  },
                ],
              }),
            },
      )
      const call = await completionCall({
        messages: [
          { role: 'user', content: 'Where is A-7?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'track', arguments: '{"order":"A-7"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: 'In transit' },
        ],
        ...(stream ? { stream: true } : {}),
      })
      expect(parsed(call.attributes['gen_ai.input.messages'])).toEqual([
        { role: 'user', parts: [{ type: 'text', content: 'Where is A-7?' }] },
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'call_1', name: 'track', arguments: '{"order":"A-7"}' }],
        },
        { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: 'In transit' }] },
      ])
      expect(parsed(call.attributes['gen_ai.output.messages'])).toEqual([
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'call_2', name: 'ship_date', arguments: '{"order":"A-7"}' }],
          finish_reason: 'tool_calls',
        },
      ])
    }
  })

  it('caps each text, and the whole, dropping the oldest messages first', async () => {
    const long = `${'a'.repeat(50_000)}`
    const turns = Array.from({ length: 8 }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `turn ${i} ${'x'.repeat(7000)}`,
    }))
    for (const messages of [[{ role: 'user', content: long }], turns]) {
      const call = await completionCall({ messages })
      for (const key of ['gen_ai.input.messages', 'gen_ai.output.messages']) {
        const value = String(call.attributes[key])
        expect(value.length).toBeLessThanOrEqual(32_768)
        for (const message of parsed(value))
          for (const part of message.parts) expect(part.content?.length ?? 0).toBeLessThanOrEqual(8192)
      }
      const input = parsed(call.attributes['gen_ai.input.messages'])
      expect(input.at(-1)?.parts[0]?.content).toMatch(messages === turns ? /^turn 7 x+$/ : /^a{8191}…$/)
      if (messages === turns) expect(input.length).toBeLessThan(turns.length)
    }
  })
})
