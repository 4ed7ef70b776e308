import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningServer, startServer } from '../helpers/process.js'
import { freshStoreConfig, type TestStoreConfig } from '../helpers/stores.js'
import {
  chunksOf,
  functionCallItem,
  responseEvents,
  startUpstreamDouble,
  type UpstreamDouble,
} from '../helpers/upstream-double.js'

/**
 * A guarded stream must never take the server down, however the provider's bytes arrive: a reply
 * whose violation arrives in the same write that ends the response (a provider flushing its tail)
 * once made the stop that aborts the upstream call destroy a socket already back in the pool, and
 * the socket's error, with no listener, ended the process.
 */
const ADMIN = 'stream-endings-admin-0123456789abcdef'
const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }
const CARD = '4111 1111 1111 1111'
const base = { id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1795316060, model: 'up' }

/** A reply that calls a tool whose arguments hold a card number. */
/** The server's process is running and answers its health check. */
async function stillUp(server: RunningServer): Promise<void> {
  expect(server.proc.exitCode).toBeNull()
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
}

/** A client that reads `bytes` of a streamed reply (or all of a shorter one), then hangs up. */
async function readThenHangUp(res: Response, bytes: number, controller: AbortController): Promise<void> {
  const reader = res.body?.getReader()
  let read = 0
  try {
    while (reader && read < bytes) {
      const { done, value } = await reader.read()
      if (done) break
      read += value.byteLength
    }
  } finally {
    controller.abort()
  }
}

function toolCallChunks(): unknown[] {
  return [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }] },
    {
      ...base,
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              { index: 0, id: 'call_1', type: 'function', function: { name: 'pay', arguments: '' } },
            ],
          },
          finish_reason: null,
        },
      ],
    },
    {
      ...base,
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, function: { arguments: `{"card": "${CARD}"}` } }] },
          finish_reason: null,
        },
      ],
    },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
  ]
}

describe('streams that end in the write carrying the violation', () => {
  let store: TestStoreConfig
  let upstream: UpstreamDouble
  let server: RunningServer

  beforeAll(async () => {
    upstream = await startUpstreamDouble()
    store = await freshStoreConfig('sqlite')
    server = await startServer({
      ...store.env,
      WARDEN_ADMIN_KEY: ADMIN,
      PROVIDER_DOUBLE_BASE_URL: upstream.baseUrl,
    })
    const app = await fetch(`${server.url}/v1/applications`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ id: 'shop', name: 'Shop', description: '', provider: 'double', model: 'm' }),
    })
    expect(app.status).toBe(201)
    const policy = await fetch(`${server.url}/v1/applications/shop/policies`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        id: 'no-cards',
        rules: [{ type: 'pii', flagged: ['credit_card'] }],
        target: ['output'],
        override_response: 'I cannot share card numbers.',
      }),
    })
    expect(policy.status).toBe(201)
  })

  afterAll(async () => {
    await server?.stop()
    await upstream?.close()
    await store?.drop()
  })

  async function stream(buffered: boolean, signal?: AbortSignal): Promise<string> {
    const res = await fetch(`${server.url}/v1/applications/shop/chat/completions`, {
      method: 'POST',
      headers: buffered ? { ...headers, 'x-warden-stream': 'buffered' } : headers,
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Which card is on file?' }], stream: true }),
      ...(signal ? { signal } : {}),
    })
    expect(res.status).toBe(200)
    return res.text()
  }

  const alive = () => stillUp(server)

  for (const buffered of [false, true])
    for (const shape of ['content', 'tool call'] as const)
      it(`stays up, and overrides the reply, with the card in ${shape === 'content' ? 'the content' : 'a tool call’s arguments'} (${buffered ? 'buffered' : 'released'})`, async () => {
        // Several times: the stop and the response's end race, and each round is a new chance.
        for (let round = 0; round < 4; round++) {
          upstream.script(
            shape === 'content'
              ? {
                  chunks: chunksOf(`Your card on file is ${CARD}, thanks.`, { size: 12 }),
                  endTogether: 3,
                  gapMs: 10,
                }
              : { chunks: toolCallChunks(), endTogether: 2, gapMs: 10 },
          )
          const text = await stream(buffered)
          expect(text).not.toContain(CARD)
          expect(text).not.toMatch(/4111[ -]?1111/)
          expect(text).toContain('I cannot share card numbers.')
          expect(text).toContain('"finish_reason":"content_filter"')
          expect(text.endsWith('data: [DONE]\n\n')).toBe(true)
          await alive()
        }
      })

  it('stays up over random write splits of the reply and random client cuts, and every stream it finishes ends with [DONE] or an error event', async () => {
    const sseOf = (chunks: unknown[]) =>
      `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`
    const replies = [
      sseOf(chunksOf(`Your card on file is ${CARD}, thanks.`, { size: 5 })),
      sseOf(chunksOf('Nothing to hide here, just a plain answer to the question.', { size: 7 })),
      sseOf(toolCallChunks()),
    ]
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: replies.length - 1 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.boolean(),
        fc.option(fc.nat({ max: 600 }), { nil: null }),
        async (which, cutsAt, buffered, clientCut) => {
          const sse = replies[which] as string
          upstream.script({ sse, cuts: cutsAt.map((c) => c % Buffer.byteLength(sse)) })
          const controller = new AbortController()
          if (clientCut === null) {
            const text = await stream(buffered)
            expect(text.endsWith('data: [DONE]\n\n') || /data: \{"error":/.test(text)).toBe(true)
            expect(text).not.toMatch(/4111[ -]?1111/)
          } else {
            // The client reads `clientCut` bytes, then hangs up.
            const res = await fetch(`${server.url}/v1/applications/shop/chat/completions`, {
              method: 'POST',
              headers: buffered ? { ...headers, 'x-warden-stream': 'buffered' } : headers,
              body: JSON.stringify({ messages: [{ role: 'user', content: 'Tell me.' }], stream: true }),
              signal: controller.signal,
            })
            await readThenHangUp(res, clientCut, controller)
          }
          await alive()
        },
      ),
      { numRuns: 60 },
    )
  })
})

describe('Responses streams that end in the write carrying the violation', () => {
  let store: TestStoreConfig
  let upstream: UpstreamDouble
  let server: RunningServer

  beforeAll(async () => {
    upstream = await startUpstreamDouble()
    store = await freshStoreConfig('sqlite')
    server = await startServer({
      ...store.env,
      WARDEN_ADMIN_KEY: ADMIN,
      PROVIDER_DOUBLE_BASE_URL: upstream.baseUrl,
    })
    for (const [path, body] of [
      ['/v1/applications', { id: 'shop', name: 'Shop', description: '', provider: 'double', model: 'm' }],
      [
        '/v1/applications/shop/policies',
        {
          id: 'no-cards',
          rules: [{ type: 'pii', flagged: ['credit_card'] }],
          target: ['output'],
          override_response: 'I cannot share card numbers.',
        },
      ],
    ] as const) {
      const res = await fetch(`${server.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
      expect(res.status).toBe(201)
    }
  })

  afterAll(async () => {
    await server?.stop()
    await upstream?.close()
    await store?.drop()
  })

  /** A Responses stream as the provider writes it: `event:` and `data:` lines per event. */
  const sseOf = (events: Record<string, unknown>[]) =>
    events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join('')
  /** Where the last `n` events of a stream start: cut there, they leave with the end in one write. */
  const tailCut = (sse: string, n: number) => {
    let at = sse.length
    for (let i = 0; i < n; i++) at = sse.lastIndexOf('event: ', at - 1)
    return Buffer.byteLength(sse.slice(0, at))
  }
  const replies = {
    content: sseOf(responseEvents(`Your card on file is ${CARD}, thanks.`, { size: 6 })),
    'function call': sseOf(responseEvents([functionCallItem('pay', `{"card": "${CARD}"}`)], { size: 5 })),
    clean: sseOf(responseEvents('Nothing to hide here, just a plain answer.', { size: 7 })),
  }

  const ask = (buffered: boolean, signal?: AbortSignal) =>
    fetch(`${server.url}/v1/applications/shop/responses`, {
      method: 'POST',
      headers: buffered ? { ...headers, 'x-warden-stream': 'buffered' } : headers,
      body: JSON.stringify({ input: 'Which card is on file?', stream: true }),
      ...(signal ? { signal } : {}),
    })

  const alive = () => stillUp(server)

  for (const buffered of [false, true])
    for (const shape of ['content', 'function call'] as const)
      it(`stays up, and overrides the response, with the card in ${shape === 'content' ? 'the text' : 'a function call’s arguments'} (${buffered ? 'buffered' : 'released'})`, async () => {
        for (let round = 0; round < 4; round++) {
          const sse = replies[shape]
          upstream.script({ sse, cuts: [tailCut(sse, 3)] })
          const res = await ask(buffered)
          expect(res.status).toBe(200)
          const text = await res.text()
          expect(text).not.toMatch(/4111[ -]?1111/)
          expect(text).toContain('I cannot share card numbers.')
          expect(text).toContain('event: response.incomplete')
          await alive()
        }
      })

  it('stays up over random write splits and client cuts, and every stream it finishes ends with its terminal event or an error event', async () => {
    const all = Object.values(replies)
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: all.length - 1 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.boolean(),
        fc.option(fc.nat({ max: 600 }), { nil: null }),
        async (which, cutsAt, buffered, clientCut) => {
          const sse = all[which] as string
          upstream.script({ sse, cuts: cutsAt.map((c) => c % Buffer.byteLength(sse)) })
          const controller = new AbortController()
          const res = await ask(buffered, controller.signal)
          if (clientCut === null) {
            const text = await res.text()
            const last = text.trimEnd().split('\n\n').at(-1) ?? ''
            expect(/^event: (response\.completed|response\.incomplete|error)\n/.test(last)).toBe(true)
            expect(text).not.toMatch(/4111[ -]?1111/)
          } else {
            await readThenHangUp(res, clientCut, controller)
          }
          await alive()
        },
      ),
      { numRuns: 40 },
    )
  })

  it('stays up, and ends with an error event, when a streamed field has the wrong type', async () => {
    const events = responseEvents('A plain answer.', { size: 5 }).map((e: Record<string, unknown>) =>
      e.type === 'response.output_text.delta' ? { ...e, delta: 4111111111111111 } : e,
    )
    upstream.script({ sse: sseOf(events), cuts: [] })
    const res = await ask(false)
    const text = await res.text()
    expect(text).not.toContain('4111111111111111')
    expect(text, text).toMatch(/event: error\n/)
    await alive()
  })
})
