import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A small OpenAI-compatible upstream for tests, on 127.0.0.1: it answers
 * `POST /v1/chat/completions` and `POST /v1/responses` with what the test scripted (replies,
 * streams, errors, silence), records every request it received, and notices a caller that hangs
 * up mid-answer. The Responses side is built from OpenAI's published Responses reference
 * (docs/agents.md says what was checked against it): a Response object, and its stream as
 * `event: <type>` / `data: <event>` pairs numbered by `sequence_number`, ending with the terminal
 * event and no [DONE].
 */

export interface ReceivedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: Record<string, any>
}

export type Script =
  /** A JSON answer (default status 200). */
  | { json: unknown; status?: number }
  /** Any body with any status and content type. */
  | { raw: string; status?: number; contentType?: string }
  /**
   * Server-sent events, one `data:` per chunk, then `data: [DONE]` unless `done: false`; `hang`
   * keeps the stream open after them. `endTogether`: the last that many chunks, the [DONE] and the
   * end of the response leave in one write (as a provider flushing its tail does).
   */
  | { chunks: unknown[]; done?: boolean; hang?: boolean; gapMs?: number; endTogether?: number }
  /** A Responses stream: each event as `event: <type>` and `data:`, no [DONE]; `hang` keeps it open after them. */
  | { events: Record<string, unknown>[]; hang?: boolean }
  /** A stream's bytes as given, written in pieces cut at these offsets, the last piece ending the response. */
  | { sse: string; cuts: number[] }
  /** Never answers. */
  | { hang: true }
  /** A stream the test writes itself, chunk by chunk, when it chooses: `pushed` is handed the pen. */
  | { pushed: (stream: PushedStream) => void }

/** The test's pen on a stream it writes itself (its head is already sent). */
export interface PushedStream {
  /** Sends one chunk as a `data:` event. */
  write(chunk: unknown): void
  /** Sends `data: [DONE]` and ends the response. */
  end(): void
}

export interface UpstreamDouble {
  /** The base URL to configure, ending in /v1. */
  baseUrl: string
  received: ReceivedRequest[]
  /** Answers the next requests with these scripts, in order; after them, `fallback`. */
  script(...scripts: (Script | ((request: ReceivedRequest) => Script))[]): void
  fallback: (request: ReceivedRequest) => Script
  /** Resolves when a caller hangs up before an answer is complete. */
  nextHangUp(): Promise<void>
  hangUps: number
  close(): Promise<void>
}

/** A chat completion whose choices say these texts. */
export function completion(texts: string | string[], extra: Record<string, unknown> = {}) {
  const list = Array.isArray(texts) ? texts : [texts]
  return {
    id: 'chatcmpl-upstream',
    object: 'chat.completion',
    created: 1795316060,
    model: 'upstream-model',
    choices: list.map((content, index) => ({
      index,
      message: { role: 'assistant', content, refusal: null },
      logprobs: null,
      finish_reason: 'stop',
    })),
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    system_fingerprint: 'fp_double',
    ...extra,
  }
}

/** The chunks of a streamed reply: each text split in pieces of `size` characters, per choice. */
export function chunksOf(texts: string | string[], options: { size?: number; usage?: boolean } = {}) {
  const list = Array.isArray(texts) ? texts : [texts]
  const size = options.size ?? 4
  const base = {
    id: 'chatcmpl-upstream',
    object: 'chat.completion.chunk',
    created: 1795316060,
    model: 'upstream-model',
  }
  const usage = options.usage ? { usage: null } : {}
  const chunks: unknown[] = []
  for (const [index, text] of list.entries()) {
    chunks.push({
      ...base,
      choices: [{ index, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      ...usage,
    })
    for (let i = 0; i < text.length; i += size)
      chunks.push({
        ...base,
        choices: [{ index, delta: { content: text.slice(i, i + size) }, finish_reason: null }],
        ...usage,
      })
    chunks.push({ ...base, choices: [{ index, delta: {}, finish_reason: 'stop' }], ...usage })
  }
  if (options.usage)
    chunks.push({
      ...base,
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    })
  return chunks
}

const RESPONSE_BASE = {
  object: 'response',
  created_at: 1795316060,
  error: null,
  incomplete_details: null,
  instructions: null,
  max_output_tokens: null,
  model: 'upstream-model',
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  store: true,
  temperature: 1,
  text: { format: { type: 'text' } },
  tool_choice: 'auto',
  tools: [],
  top_p: 1,
  truncation: 'disabled',
  user: null,
  metadata: {},
}

const USAGE = {
  input_tokens: 10,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 5,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 15,
}

/** An output message item saying `text`. */
export const messageItem = (text: string, id = 'msg_upstream') => ({
  type: 'message',
  id,
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
})

/** A function call output item. */
export const functionCallItem = (
  name: string,
  args: string,
  callId = 'call_upstream',
  id = 'fc_upstream',
) => ({
  type: 'function_call',
  id,
  call_id: callId,
  name,
  arguments: args,
  status: 'completed',
})

/** A Response (OpenAI's Responses API) whose output is these items (a string: one message saying it). */
export function response(output: string | Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  return {
    id: 'resp_upstream',
    ...RESPONSE_BASE,
    status: 'completed',
    output: typeof output === 'string' ? [messageItem(output)] : output,
    usage: USAGE,
    ...extra,
  }
}

/**
 * The events of a streamed Response: created, in_progress, each item added, a message's text
 * in pieces of `size` characters (a call's arguments likewise), each done, then the terminal
 * event (`response.completed`, or `response.incomplete` when its status says so).
 */
export function responseEvents(
  output: string | Record<string, unknown>[],
  options: { size?: number; extra?: Record<string, unknown> } = {},
) {
  const size = options.size ?? 4
  const final = response(output, options.extra)
  const events: Record<string, unknown>[] = []
  const shell = { ...final, status: 'in_progress', output: [], usage: null }
  events.push({ type: 'response.created', response: shell })
  events.push({ type: 'response.in_progress', response: shell })
  final.output.forEach((item: any, output_index: number) => {
    if (item.type === 'message') {
      events.push({
        type: 'response.output_item.added',
        output_index,
        item: { ...item, status: 'in_progress', content: [] },
      })
      item.content.forEach((part: any, content_index: number) => {
        const base = { item_id: item.id, output_index, content_index }
        events.push({ type: 'response.content_part.added', ...base, part: { ...part, text: '' } })
        for (let i = 0; i < part.text.length; i += size)
          events.push({
            type: 'response.output_text.delta',
            ...base,
            delta: part.text.slice(i, i + size),
            logprobs: [],
          })
        events.push({ type: 'response.output_text.done', ...base, text: part.text, logprobs: [] })
        events.push({ type: 'response.content_part.done', ...base, part })
      })
    } else if (item.type === 'function_call') {
      events.push({
        type: 'response.output_item.added',
        output_index,
        item: { ...item, status: 'in_progress', arguments: '' },
      })
      for (let i = 0; i < item.arguments.length; i += size)
        events.push({
          type: 'response.function_call_arguments.delta',
          item_id: item.id,
          output_index,
          delta: item.arguments.slice(i, i + size),
        })
      events.push({
        type: 'response.function_call_arguments.done',
        item_id: item.id,
        output_index,
        arguments: item.arguments,
      })
    } else events.push({ type: 'response.output_item.added', output_index, item })
    events.push({ type: 'response.output_item.done', output_index, item })
  })
  events.push({
    type: final.status === 'incomplete' ? 'response.incomplete' : 'response.completed',
    response: final,
  })
  return events.map((event, sequence_number) => ({ ...event, sequence_number }))
}

/** The text of a Responses request's last user message (a string input, or its last user item's text). */
function lastUserInput(body: Record<string, any>): string {
  if (typeof body.input === 'string') return body.input
  const item = [...(body.input ?? [])].reverse().find((i: any) => i.role === 'user')
  if (!item) return ''
  return typeof item.content === 'string'
    ? item.content
    : (item.content ?? []).map((p: any) => p.text ?? '').join('\n')
}

const lastUser = (body: Record<string, any>) =>
  [...(body.messages ?? [])].reverse().find((m: { role: string }) => m.role === 'user')?.content ?? ''

export async function startUpstreamDouble(): Promise<UpstreamDouble> {
  const queue: (Script | ((request: ReceivedRequest) => Script))[] = []
  const hangUpWaiters: (() => void)[] = []
  const open = new Set<ServerResponse>()
  const double: UpstreamDouble = {
    baseUrl: '',
    received: [],
    script: (...scripts) => {
      queue.push(...scripts)
    },
    fallback: (request) =>
      request.url === '/v1/responses'
        ? request.body.stream === true
          ? { events: responseEvents(`echo: ${lastUserInput(request.body)}`) }
          : { json: response(`echo: ${lastUserInput(request.body)}`) }
        : { json: completion(`echo: ${lastUser(request.body)}`) },
    nextHangUp: () => new Promise((resolve) => hangUpWaiters.push(resolve)),
    hangUps: 0,
    close: async () => {
      for (const res of open) res.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }

  const server = createServer((req, res) => {
    let text = ''
    req.setEncoding('utf8')
    req.on('data', (part: string) => {
      text += part
    })
    req.on('end', () => {
      let body: Record<string, any> = {}
      try {
        body = JSON.parse(text)
      } catch {}
      const request: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
      }
      double.received.push(request)
      open.add(res)
      res.on('close', () => {
        open.delete(res)
        if (!res.writableFinished) {
          double.hangUps++
          for (const resolve of hangUpWaiters.splice(0)) resolve()
        }
      })
      if (req.method !== 'POST' || (req.url !== '/v1/chat/completions' && req.url !== '/v1/responses')) {
        // OpenAI's error shape: message, type, param, code.
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(
            '{"error":{"message":"no such route","type":"invalid_request_error","param":null,"code":null}}',
          )
        return
      }
      const next = queue.shift() ?? double.fallback
      void answer(res, typeof next === 'function' ? next(request) : next)
    })
  })

  async function writeInPieces(res: ServerResponse, script: { sse: string; cuts: number[] }) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' })
    const bytes = Buffer.from(script.sse)
    const cuts = [...new Set(script.cuts)].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b)
    let from = 0
    for (const cut of cuts) {
      if (res.destroyed) return
      res.write(bytes.subarray(from, cut))
      from = cut
      // Each piece its own packet: the reader sees the writes apart.
      await new Promise((resolve) => setImmediate(resolve))
    }
    if (!res.destroyed) res.end(bytes.subarray(from))
  }

  async function answer(res: ServerResponse, script: Script) {
    if ('pushed' in script) {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' })
      res.flushHeaders()
      script.pushed({
        write: (chunk) => {
          if (!res.destroyed) res.write(`data: ${JSON.stringify(chunk)}\n\n`)
        },
        end: () => {
          if (!res.destroyed) res.end('data: [DONE]\n\n')
        },
      })
      return
    }
    if ('sse' in script) return writeInPieces(res, script)
    if ('events' in script) {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' })
      for (const event of script.events) {
        if (res.destroyed) return
        res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`)
      }
      if (!script.hang && !res.destroyed) res.end()
      return
    }
    if ('hang' in script && !('chunks' in script)) return
    if ('json' in script) {
      res
        .writeHead(script.status ?? 200, { 'content-type': 'application/json' })
        .end(JSON.stringify(script.json))
      return
    }
    if ('raw' in script) {
      res
        .writeHead(script.status ?? 200, { 'content-type': script.contentType ?? 'text/plain' })
        .end(script.raw)
      return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' })
    const together = script.hang ? 0 : Math.min(script.endTogether ?? 0, script.chunks.length)
    const apart = script.chunks.slice(0, script.chunks.length - together)
    for (const chunk of apart) {
      if (res.destroyed) return
      res.write(`data: ${JSON.stringify(chunk)}\n\n`)
      if (script.gapMs) await new Promise((resolve) => setTimeout(resolve, script.gapMs))
    }
    if (script.hang) return
    let tail = script.chunks
      .slice(apart.length)
      .map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`)
      .join('')
    if (script.done !== false) tail += 'data: [DONE]\n\n'
    if (res.destroyed) return
    if (script.endTogether === undefined) {
      if (tail !== '') res.write(tail)
      res.end()
    } else res.end(tail)
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  double.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  return double
}
