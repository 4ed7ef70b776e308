/**
 * The call to a model provider's OpenAI-compatible Chat Completions endpoint
 * (docs/chat-completions.md): one POST over a keep-alive connection (src/net/outbound.ts).
 * `callUpstream` reads the whole reply: a JSON one within the provider timeout, a streamed one
 * (kept whole, for a buffered stream) as `streamUpstream` reads it; `streamUpstream` yields a
 * stream's chunks as they arrive (parsed by eventsource-parser), the timeout bounding each wait:
 * a stream is bounded by silence, never by its length. Failures become 502 upstream_error or 504 upstream_timeout; the
 * provider's key appears in no error, since a provider may echo it back in its own error
 * messages. A body that cannot be serialised is never sent, and is Warden's own failure (500
 * internal_error), not the network's.
 */
import type { IncomingMessage } from 'node:http'
import { createParser } from 'eventsource-parser'
import type { ProviderUpstream } from '../config.js'
import { AppError } from '../errors.js'
import { letGo, postJson, readBody } from '../net/outbound.js'
import { MAX_NESTING_DEPTH, tooDeep } from '../schemas/nesting.js'
import { chunkProblem, completionProblem, type StreamChunk, streamReplies } from './completions.js'
import { exactScrubber, type Scrubber, secretScrubber } from './secrets.js'

type Json = Record<string, unknown>

/** The most of a reply Warden reads, streamed or not: far beyond any completion, short of exhausting memory. */
const MAX_REPLY_BYTES = 64 * 1024 * 1024
/** The most of an upstream's error message a client is shown. */
const MAX_ERROR_DETAIL = 500

export type UpstreamReply =
  | { stream: false; completion: Json & { choices: Json[] } }
  | { stream: true; chunks: StreamChunk[] }

/**
 * Which of the provider's OpenAI-compatible APIs a call speaks: its path under the base URL, and
 * how a reply and a stream's events are read (what Warden cannot relay, an error in a stream,
 * whether a stream that ended without [DONE] was complete). Chat Completions unless said.
 */
export interface UpstreamApi {
  /** Under the provider's base URL: `chat/completions`, `responses`. */
  path: string
  /** What a whole reply is, for messages: `chat completion`, `response`. */
  reply: string
  /** Why a whole reply cannot be relayed; null when it can. */
  replyProblem(value: unknown): string | null
  /** Why a stream's event cannot be relayed; null when it can. */
  eventProblem(value: unknown): string | null
  /** The message of an error the provider sent as an event of a stream; null when the event is none. */
  eventError(value: unknown): string | null
  /** Whether the events received make a complete reply (a stream that ended without [DONE]). */
  complete(events: readonly Json[]): boolean
}

/** OpenAI's Chat Completions API (docs/chat-completions.md). */
export const CHAT_COMPLETIONS_API: UpstreamApi = {
  path: 'chat/completions',
  reply: 'chat completion',
  replyProblem: completionProblem,
  eventProblem: chunkProblem,
  eventError: errorMessage,
  complete: (events) => streamReplies(events.map((chunk) => ({ raw: '', chunk }))).finished,
}

export interface UpstreamCall {
  upstream: Pick<ProviderUpstream, 'baseUrl' | 'apiKey'>
  body: Json
  stream: boolean
  timeoutMs: number
  /** The client went away: abandon the call. */
  signal?: AbortSignal
  /** The API called: Chat Completions when absent. */
  api?: UpstreamApi
}

/** The client closed its connection before the answer: nobody is left to answer. */
export class ClientGoneError extends Error {
  override name = 'ClientGoneError'
}

/**
 * Calls the upstream and reads its whole reply: a stream's chunks as `streamUpstream` yields
 * them, so that a long stream is bounded by silence, as a released one is, not by its length.
 */
export async function callUpstream(call: UpstreamCall): Promise<UpstreamReply> {
  const { upstream, body, stream, timeoutMs, signal } = call
  const api = call.api ?? CHAT_COMPLETIONS_API
  if (stream) {
    const chunks: StreamChunk[] = []
    for await (const chunk of streamUpstream(call)) chunks.push(chunk)
    return { stream: true, chunks }
  }
  if (signal?.aborted) throw new ClientGoneError('the client went away')
  // Serialised before anything is sent, apart from the network failures below: a body that
  // cannot be serialised is Warden's failure, never the provider's.
  const payload = serialised(body)
  const controller = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort()
  }, timeoutMs)
  const onClientGone = () => controller.abort()
  signal?.addEventListener('abort', onClientGone, { once: true })
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (upstream.apiKey) headers.authorization = `Bearer ${upstream.apiKey}`
  const scrub = secretScrubber(upstream.apiKey)
  /** What a failure is, once the deadline and the client are accounted for. */
  const failure = (error: unknown, doing: string): Error => {
    if (error instanceof AppError) return error
    if (timedOut)
      return new AppError('upstream_timeout', `The model provider did not answer within ${timeoutMs} ms`)
    if (signal?.aborted) return new ClientGoneError('the client went away')
    return new AppError('upstream_error', `${doing} (${networkReason(error)})`)
  }
  try {
    const response = await post(upstream, api, headers, payload, controller.signal, failure)
    try {
      await expectSuccess(response, scrub)
      // Even a successful reply never carries the key on: an upstream that echoes its request would.
      const text = exactScrubber(upstream.apiKey)(await readText(response, MAX_REPLY_BYTES))
      let completion: unknown
      try {
        completion = JSON.parse(text)
      } catch {
        throw nonsense('answered something that is not JSON')
      }
      const error = errorMessage(completion)
      if (error !== null)
        throw new AppError('upstream_error', `The model provider answered an error: ${said(error, scrub)}`)
      const problem = api.replyProblem(completion)
      if (problem !== null) throw nonsense(`answered a ${api.reply} that Warden cannot relay: it ${problem}`)
      const relayable = completion as Json & { choices: Json[] }
      if (tooDeep(relayable, MAX_NESTING_DEPTH) !== null) throw nonsense(`answered ${DEEPER}`)
      return { stream: false, completion: relayable }
    } catch (error) {
      // Stop reading whatever is left of the reply (and let its connection go).
      response.destroy()
      throw failure(error, 'The connection to the model provider broke')
    }
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener('abort', onClientGone)
  }
}

/**
 * Calls the upstream for a streamed reply and yields its chunks as they arrive, up to `[DONE]`
 * (or the end of a stream whose every choice finished). `timeoutMs` bounds the wait for the
 * answer and for each piece of it, not the whole stream: the clock stops while the caller
 * handles a chunk, and starts again when it asks for the next. Failures are those of
 * `callUpstream`; returning early (a violation, a client gone) aborts the call.
 */
export async function* streamUpstream(call: Omit<UpstreamCall, 'stream'>): AsyncGenerator<StreamChunk> {
  const { upstream, body, timeoutMs, signal } = call
  const api = call.api ?? CHAT_COMPLETIONS_API
  if (signal?.aborted) throw new ClientGoneError('the client went away')
  const payload = serialised(body)
  const controller = new AbortController()
  let timedOut = false
  let timer: NodeJS.Timeout | undefined
  const startClock = () => {
    clearTimeout(timer)
    timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, timeoutMs)
  }
  const stopClock = () => clearTimeout(timer)
  const onClientGone = () => controller.abort()
  signal?.addEventListener('abort', onClientGone, { once: true })
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' }
  if (upstream.apiKey) headers.authorization = `Bearer ${upstream.apiKey}`
  const scrub = secretScrubber(upstream.apiKey)
  const failure = (error: unknown, doing: string): Error => {
    if (error instanceof AppError) return error
    if (timedOut) return new AppError('upstream_timeout', `The model provider was silent for ${timeoutMs} ms`)
    if (signal?.aborted) return new ClientGoneError('the client went away')
    return new AppError('upstream_error', `${doing} (${networkReason(error)})`)
  }
  startClock()
  try {
    const response = await post(upstream, api, headers, payload, controller.signal, failure)
    try {
      await expectSuccess(response, scrub)
      const type = response.headers['content-type'] ?? ''
      if (!type.includes('text/event-stream'))
        throw nonsense(`answered ${type || 'no content type'} to a streamed request`)
      const events = new EventReader(api, scrub, exactScrubber(upstream.apiKey))
      let any = false
      // Not destroyed when the caller returns early: `letGo` below decides what becomes of it.
      for await (const part of response.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>) {
        const chunks = events.feed(part)
        if (chunks.length === 0) continue
        stopClock()
        for (const chunk of chunks) {
          any = true
          yield chunk
        }
        // A failure after good chunks in the same piece: those went first.
        events.rethrow()
        startClock()
      }
      for (const chunk of events.end()) {
        any = true
        yield chunk
      }
      if (!any) throw nonsense('streamed no chunk')
    } catch (error) {
      response.destroy()
      throw failure(error, 'The connection to the model provider broke')
    } finally {
      // Returned early: a reply still arriving is abandoned (the provider sees the connection
      // close); one that arrived whole is drained, its connection back in the pool.
      letGo(response)
    }
  } finally {
    stopClock()
    signal?.removeEventListener('abort', onClientGone)
  }
}

/** The data events of a server-sent event stream, parsed as they arrive, each an event of the API called (a chat completion chunk). */
class EventReader {
  private readonly decoder = new TextDecoder()
  private readonly parser
  private ready: StreamChunk[] = []
  private seen: Json[] = []
  private done = false
  private problem: AppError | null = null
  private bytes = 0

  /** `scrub` reads the upstream's error messages, `exact` every event (exactScrubber). */
  constructor(
    private readonly api: UpstreamApi,
    scrub: Scrubber,
    exact: Scrubber,
  ) {
    this.parser = createParser({
      onEvent: (event) => {
        if (this.done || this.problem) return
        if (event.data === '[DONE]') {
          this.done = true
          return
        }
        const data = exact(event.data)
        let chunk: unknown
        try {
          chunk = JSON.parse(data)
        } catch {
          this.problem = nonsense('streamed an event that is not JSON')
          return
        }
        const error = this.api.eventError(chunk)
        const problem = error === null ? this.api.eventProblem(chunk) : null
        if (error !== null)
          this.problem = new AppError(
            'upstream_error',
            `The model provider failed mid-stream: ${said(error, scrub)}`,
          )
        else if (problem !== null)
          this.problem = nonsense(`streamed a chunk that Warden cannot relay: it ${problem}`)
        else if (tooDeep(chunk as Json, MAX_NESTING_DEPTH) !== null)
          this.problem = nonsense(`streamed ${DEEPER}`)
        else this.ready.push({ raw: data, chunk: chunk as Json })
      },
    })
  }

  /** The chunks completed by `part`; throws the stream's problem. */
  feed(part: Uint8Array): StreamChunk[] {
    this.bytes += part.byteLength
    if (this.bytes > MAX_REPLY_BYTES) throw nonsense(`streamed more than ${MAX_REPLY_BYTES} bytes`)
    this.parser.feed(this.decoder.decode(part, { stream: true }))
    return this.take()
  }

  /** The last chunks once the stream ended; throws when it ended before the reply was complete. */
  end(): StreamChunk[] {
    if (this.done) return []
    this.parser.feed(`${this.decoder.decode()}\n\n`)
    const last = this.take()
    if (!this.api.complete(this.seen)) throw nonsense('ended its stream before the reply was complete')
    return last
  }

  /** Throws the stream's problem, if it has one. */
  rethrow(): void {
    if (this.problem) throw this.problem
  }

  private take(): StreamChunk[] {
    if (this.problem && this.ready.length === 0) throw this.problem
    const chunks = this.ready
    this.ready = []
    // Only the finish reasons (a chat completion's) or the event types matter once the stream ended without [DONE].
    for (const chunk of chunks) this.seen.push({ choices: chunk.chunk.choices, type: chunk.chunk.type })
    return chunks
  }
}

const nonsense = (what: string) => new AppError('upstream_error', `The model provider ${what}`)
/**
 * A reply is serialised again on its way to the client: one nested as deep as would overflow the
 * stack there is refused here, by the limit requests have.
 */
const DEEPER = `JSON nested deeper than ${MAX_NESTING_DEPTH} levels`

/** The body as JSON text; a 500 internal_error, carrying the cause for the log, when it cannot be. */
/** Sends the request; a failure to connect is `failure`'s to name. */
async function post(
  upstream: { baseUrl: string },
  api: UpstreamApi,
  headers: Record<string, string>,
  payload: Buffer,
  signal: AbortSignal,
  failure: (error: unknown, doing: string) => Error,
): Promise<IncomingMessage> {
  try {
    return await postJson(new URL(`${upstream.baseUrl}/${api.path}`), headers, payload, signal)
  } catch (error) {
    throw failure(error, 'Could not reach the model provider')
  }
}

/** A status other than 2xx is the provider's error, its message read from the body. */
async function expectSuccess(response: IncomingMessage, scrub: Scrubber): Promise<void> {
  const status = response.statusCode ?? 0
  if (status < 200 || status > 299) {
    const text = await readText(response, 64 * 1024)
    throw new AppError('upstream_error', statusDetail(status, text, scrub))
  }
}

/** The request's bytes: encoded once, then measured and written as they are. */
function serialised(body: Json): Buffer {
  try {
    return Buffer.from(JSON.stringify(body))
  } catch (error) {
    const problem = new AppError(
      'internal_error',
      'The request could not be serialised for the model provider; the provider was not called',
    )
    problem.cause = error
    throw problem
  }
}

/** A network failure's reason, without URLs or stack: the system error code where there is one. */
function networkReason(error: unknown): string {
  const code = (error as { code?: unknown })?.code ?? (error as { cause?: { code?: unknown } })?.cause?.code
  if (typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code)) return code
  return 'connection failed'
}

/** The message of an OpenAI-style error body, if the body is one (an `error` member that is not null). */
export function errorMessage(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || !('error' in body)) return null
  const error = (body as { error: unknown }).error
  if (error === null || error === undefined) return null
  if (typeof error === 'string') return error
  if (typeof error === 'object' && error !== null) {
    const message = (error as { message?: unknown }).message
    if (typeof message === 'string') return message
  }
  return 'no message'
}

function statusDetail(status: number, text: string, scrub: Scrubber): string {
  let message: string | null = null
  try {
    message = errorMessage(JSON.parse(text))
  } catch {
    message = null
  }
  return `The model provider answered HTTP ${status}${message ? `: ${said(message, scrub)}` : ''}`
}

/**
 * An upstream's message as a client may read it: the key scrubbed first, then cut to
 * MAX_ERROR_DETAIL characters (cut first, a key across the cut would keep all but its last
 * characters). Scrubbing reads at most four times that much of it.
 */
function said(message: string, scrub: Scrubber): string {
  const scrubbed = scrub(message.slice(0, MAX_ERROR_DETAIL * 4))
  return scrubbed.length > MAX_ERROR_DETAIL ? `${scrubbed.slice(0, MAX_ERROR_DETAIL)}…` : scrubbed
}

/** The body as text, at most `limit` bytes. */
async function readText(response: IncomingMessage, limit: number): Promise<string> {
  try {
    return await readBody(response, limit)
  } catch (error) {
    throw error instanceof RangeError ? nonsense(`answered more than ${limit} bytes`) : error
  }
}
