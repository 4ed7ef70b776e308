import OpenAI from 'openai'
import type {
  Response,
  ResponseFunctionToolCall,
  ResponseInputItem,
} from 'openai/resources/responses/responses'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningServer, startServer } from '../helpers/process.js'
import { freshStoreConfig, type TestStoreConfig } from '../helpers/stores.js'
import {
  functionCallItem,
  type ReceivedRequest,
  response,
  responseEvents,
  startUpstreamDouble,
  type UpstreamDouble,
} from '../helpers/upstream-double.js'

/**
 * An agent loop with the real `openai` SDK through the guarded Responses API (docs/agents.md):
 * one function tool, whole and streamed. A call the output policy passes is run and the loop goes
 * on to the model's answer; a blocked call never reaches the agent and the loop ends with the
 * override, not a parse error.
 */
const ADMIN = 'agent-loop-responses-admin-0123456789'
const OVERRIDE = 'I cannot move card numbers around.'

describe.each([false, true])('an agent loop through guarded responses (stream: %s)', (streamed) => {
  let store: TestStoreConfig
  let upstream: UpstreamDouble
  let server: RunningServer
  let client: OpenAI
  let nextArguments = ''

  beforeAll(async () => {
    upstream = await startUpstreamDouble()
    // The model calls the tool first, then answers from its result.
    upstream.fallback = (request: ReceivedRequest) => {
      const last = request.body.input.at(-1)
      const output =
        last.type === 'function_call_output'
          ? `Done: ${last.output}`
          : [functionCallItem('refund', nextArguments, 'call_1', 'fc_1')]
      return request.body.stream
        ? { events: responseEvents(output, { size: 3 }) }
        : { json: response(output) }
    }
    store = await freshStoreConfig('sqlite')
    server = await startServer({
      ...store.env,
      WARDEN_ADMIN_KEY: ADMIN,
      PROVIDER_DOUBLE_BASE_URL: upstream.baseUrl,
    })
    const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }
    const create = async (url: string, body: object) => {
      const res = await fetch(`${server.url}${url}`, { method: 'POST', headers, body: JSON.stringify(body) })
      expect(res.status).toBe(201)
    }
    await create('/v1/applications', {
      id: 'refunds',
      name: 'Refunds',
      description: '',
      provider: 'double',
      model: 'm',
    })
    await create('/v1/applications/refunds/policies', {
      id: 'no-cards',
      rules: [{ type: 'pii', flagged: ['credit_card'] }],
      target: ['output'],
      override_response: OVERRIDE,
    })
    client = new OpenAI({ apiKey: ADMIN, baseURL: `${server.url}/v1/applications/refunds`, maxRetries: 0 })
  })

  afterAll(async () => {
    await server?.stop()
    await upstream?.close()
    await store?.drop()
  })

  const tools = [
    {
      type: 'function' as const,
      name: 'refund',
      description: 'Refunds an order.',
      strict: false,
      parameters: { type: 'object', properties: { order: { type: 'number' }, card: { type: 'string' } } },
    },
  ]

  /** The loop: ask, run every function call the answer holds, send the results back, until it answers in text. */
  async function loop(calls: unknown[]): Promise<{ text: string; status: string | undefined }> {
    const input: ResponseInputItem[] = [{ role: 'user', content: 'Refund order 1042 to my card.' }]
    for (let turn = 0; turn < 4; turn++) {
      const answer: Response = streamed
        ? await client.responses.stream({ model: 'm', input, tools }).finalResponse()
        : await client.responses.create({ model: 'm', input, tools })
      const called = answer.output.filter(
        (item): item is ResponseFunctionToolCall => item.type === 'function_call',
      )
      if (called.length === 0) return { text: answer.output_text, status: answer.status }
      for (const call of called) {
        calls.push(JSON.parse(call.arguments))
        input.push(call, {
          type: 'function_call_output',
          call_id: call.call_id,
          output: 'refund 1042 issued',
        })
      }
    }
    throw new Error('the loop did not end')
  }

  it('runs a call that passes, and the loop goes on to the model’s answer', async () => {
    nextArguments = '{"order": 1042}'
    const calls: unknown[] = []
    const before = upstream.received.length
    const answer = await loop(calls)
    expect(calls).toEqual([{ order: 1042 }])
    expect(answer).toEqual({ text: 'Done: refund 1042 issued', status: 'completed' })
    expect(upstream.received.length - before).toBe(2)
    expect(upstream.received.at(-1)?.url).toBe('/v1/responses')
  })

  it('never hands the agent a call that fails: the loop ends with the override', async () => {
    nextArguments = '{"order": 1042, "card": "4111 1111 1111 1111"}'
    const calls: unknown[] = []
    const before = upstream.received.length
    const answer = await loop(calls)
    expect(calls).toEqual([])
    expect(answer).toEqual({ text: OVERRIDE, status: 'incomplete' })
    expect(upstream.received.length - before).toBe(1)
  })
})
