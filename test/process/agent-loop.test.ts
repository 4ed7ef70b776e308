import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningServer, startServer } from '../helpers/process.js'
import { freshStoreConfig, type TestStoreConfig } from '../helpers/stores.js'
import {
  chunksOf,
  type ReceivedRequest,
  startUpstreamDouble,
  type UpstreamDouble,
} from '../helpers/upstream-double.js'

/**
 * An agent loop (the OpenAI SDK's `runTools`, streamed) through a guarded chat completion: a tool
 * call the output policy passes is run and the loop goes on; one it fails never reaches the agent,
 * not even in part, and the loop ends with the override instead of running half a call.
 */
const ADMIN = 'agent-loop-admin-0123456789abcdef'
const OVERRIDE = 'I cannot move card numbers around.'
const base = { id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1795316060, model: 'up' }
const piece = (delta: object, finish: string | null = null) => ({
  ...base,
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
})

/** A streamed reply that calls `refund` with these arguments, two characters a chunk. */
function callChunks(args: string): unknown[] {
  const pieces = args.match(/[\s\S]{1,2}/g) ?? []
  return [
    piece({ role: 'assistant', content: null }),
    piece({
      tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'refund', arguments: '' } }],
    }),
    ...pieces.map((p) => piece({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
    piece({}, 'tool_calls'),
  ]
}

describe('an agent loop through a guarded chat completion', () => {
  let store: TestStoreConfig
  let upstream: UpstreamDouble
  let server: RunningServer
  let client: OpenAI
  let nextArguments = ''

  beforeAll(async () => {
    upstream = await startUpstreamDouble()
    // The model calls the tool first, then answers from its result.
    upstream.fallback = (request: ReceivedRequest) => {
      const last = request.body.messages.at(-1)
      return last.role === 'tool'
        ? { chunks: chunksOf(`Done: ${last.content}`, { size: 6 }) }
        : { chunks: callChunks(nextArguments), gapMs: 1 }
    }
    store = await freshStoreConfig('sqlite')
    server = await startServer({
      ...store.env,
      WARDEN_ADMIN_KEY: ADMIN,
      PROVIDER_DOUBLE_BASE_URL: upstream.baseUrl,
    })
    const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }
    const app = await fetch(`${server.url}/v1/applications`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        id: 'refunds',
        name: 'Refunds',
        description: '',
        provider: 'double',
        model: 'm',
      }),
    })
    expect(app.status).toBe(201)
    const policy = await fetch(`${server.url}/v1/applications/refunds/policies`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        id: 'no-cards',
        rules: [{ type: 'pii', flagged: ['credit_card'] }],
        target: ['output'],
        override_response: OVERRIDE,
      }),
    })
    expect(policy.status).toBe(201)
    client = new OpenAI({ apiKey: ADMIN, baseURL: `${server.url}/v1/applications/refunds`, maxRetries: 0 })
  })

  afterAll(async () => {
    await server?.stop()
    await upstream?.close()
    await store?.drop()
  })

  function run(calls: unknown[]) {
    return client.chat.completions.runTools({
      model: 'm',
      stream: true,
      messages: [{ role: 'user', content: 'Refund order 1042 to my card.' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'refund',
            description: 'Refunds an order.',
            parameters: {
              type: 'object',
              properties: { order: { type: 'number' }, card: { type: 'string' } },
            },
            parse: JSON.parse,
            function: (args: unknown) => {
              calls.push(args)
              return 'refund 1042 issued'
            },
          },
        },
      ],
    })
  }

  it('runs a call that passes, and the loop goes on to the model’s answer', async () => {
    nextArguments = '{"order": 1042}'
    const calls: unknown[] = []
    const before = upstream.received.length
    const content = await run(calls).finalContent()
    expect(calls).toEqual([{ order: 1042 }])
    expect(content).toBe('Done: refund 1042 issued')
    expect(upstream.received.length - before).toBe(2)
  })

  it('never hands the agent a call that fails, not even half of it: the loop ends with the override', async () => {
    nextArguments = '{"order": 1042, "card": "4111 1111 1111 1111"}'
    const calls: unknown[] = []
    const before = upstream.received.length
    const runner = run(calls)
    const received: string[] = []
    runner.on('chunk', (chunk) => received.push(JSON.stringify(chunk)))
    const content = await runner.finalContent()
    expect(calls).toEqual([])
    expect(content).toBe(OVERRIDE)
    // One call upstream: the agent fed back no parse error and asked nothing more.
    expect(upstream.received.length - before).toBe(1)
    expect(received.join('')).not.toContain('tool_calls')
    expect(received.join('')).not.toMatch(/4111[ -]?1111/)
  })
})
