import { Agent, OpenAIProvider, Runner, tool } from '@openai/agents'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { type RunningServer, startServer } from '../helpers/process.js'
import { freshStoreConfig, type TestStoreConfig } from '../helpers/stores.js'
import {
  completion,
  functionCallItem,
  type ReceivedRequest,
  response,
  responseEvents,
  startUpstreamDouble,
  type UpstreamDouble,
} from '../helpers/upstream-double.js'

/**
 * OpenAI's Agents SDK (`@openai/agents`) through Warden (docs/agents.md): its agent loop with one
 * function tool completes a tool round trip through the guarded Responses API, streamed and not,
 * and a tool call the output policy blocks ends the run with the override, the tool never run.
 * The same agent on the chat route, with the SDK's switch to Chat Completions.
 */
const ADMIN = 'agents-sdk-admin-0123456789abcdef'
const OVERRIDE = 'I cannot move card numbers around.'

describe('the Agents SDK through Warden', () => {
  let store: TestStoreConfig
  let upstream: UpstreamDouble
  let server: RunningServer
  let nextArguments = ''

  beforeAll(async () => {
    upstream = await startUpstreamDouble()
    // The model calls the tool first, then answers from its result.
    upstream.fallback = (request: ReceivedRequest) => {
      if (request.url === '/v1/chat/completions') {
        const last = request.body.messages.at(-1)
        if (last.role === 'tool') return { json: completion(`Done: ${last.content}`) }
        return {
          json: completion('', {
            choices: [
              {
                index: 0,
                message: {
                  role: 'assistant',
                  content: null,
                  tool_calls: [
                    {
                      id: 'call_1',
                      type: 'function',
                      function: { name: 'refund', arguments: nextArguments },
                    },
                  ],
                },
                logprobs: null,
                finish_reason: 'tool_calls',
              },
            ],
          }),
        }
      }
      const last = request.body.input.at(-1)
      const output =
        last.type === 'function_call_output'
          ? `Done: ${typeof last.output === 'string' ? last.output : JSON.stringify(last.output)}`
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
      expect(res.status, await res.text()).toBe(201)
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
  })

  afterAll(async () => {
    await server?.stop()
    await upstream?.close()
    await store?.drop()
  })

  function agentRun(useResponses: boolean, stream: boolean, calls: unknown[]) {
    const refund = tool({
      name: 'refund',
      description: 'Refunds an order.',
      parameters: z.object({ order: z.number() }),
      execute: async (args) => {
        calls.push(args)
        return 'refund 1042 issued'
      },
    })
    const agent = new Agent({
      name: 'Refunds',
      instructions: 'You handle refunds.',
      model: 'm',
      tools: [refund],
    })
    const runner = new Runner({
      modelProvider: new OpenAIProvider({
        apiKey: ADMIN,
        baseURL: `${server.url}/v1/applications/refunds`,
        useResponses,
      }),
      tracingDisabled: true,
    })
    return { runner, agent, input: 'Refund order 1042 to my card.', stream }
  }

  async function finalOutput(useResponses: boolean, stream: boolean, calls: unknown[]): Promise<unknown> {
    const { runner, agent, input } = agentRun(useResponses, stream, calls)
    if (!stream) return (await runner.run(agent, input)).finalOutput
    const streamed = await runner.run(agent, input, { stream: true })
    for await (const _ of streamed.toStream()) {
      // Read to the end, as an application showing the run would.
    }
    await streamed.completed
    return streamed.finalOutput
  }

  it.each([false, true])('completes one tool round trip through /responses (stream: %s)', async (stream) => {
    nextArguments = '{"order": 1042}'
    const calls: unknown[] = []
    const before = upstream.received.length
    expect(await finalOutput(true, stream, calls)).toBe('Done: refund 1042 issued')
    expect(calls).toEqual([{ order: 1042 }])
    expect(upstream.received.slice(before).map((r) => r.url)).toEqual(['/v1/responses', '/v1/responses'])
  })

  it.each([false, true])('ends the run with the override on a blocked call (stream: %s)', async (stream) => {
    nextArguments = '{"order": 1042, "card": "4111 1111 1111 1111"}'
    const calls: unknown[] = []
    const before = upstream.received.length
    expect(await finalOutput(true, stream, calls)).toBe(OVERRIDE)
    expect(calls).toEqual([])
    expect(upstream.received.length - before).toBe(1)
  })

  it('works on the chat route with the switch to Chat Completions', async () => {
    nextArguments = '{"order": 1042}'
    const calls: unknown[] = []
    const before = upstream.received.length
    expect(await finalOutput(false, false, calls)).toBe('Done: refund 1042 issued')
    expect(calls).toEqual([{ order: 1042 }])
    expect(upstream.received.slice(before).map((r) => r.url)).toEqual([
      '/v1/chat/completions',
      '/v1/chat/completions',
    ])
  })
})
