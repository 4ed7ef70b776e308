/**
 * POSTs to OpenAI-compatible endpoints (model providers, the judge, guards) over node:http or
 * node:https with keep-alive agents. Not `fetch`: a local round trip through it cost 0.8–1.4 ms of
 * CPU here against 0.1 ms this way (both ends), on the path of every guarded completion and judge
 * call.
 *
 * Every socket these agents open has an owner for its errors, for its whole life (in use, idle in
 * the pool, closing): an error nobody listens for would end the process, and a guardrail that dies
 * takes every tenant's traffic with it. And an abort is Warden's own, never node:http's: aborting
 * a call whose answer has fully arrived does nothing (the connection goes back to the pool), where
 * node:http's `signal` would destroy a socket that may already be idle in the pool.
 */
import {
  type AgentOptions,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
} from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import type { Duplex } from 'node:stream'

/** What became of sockets' errors that no request was there to hear (for tests and the curious). */
export const orphanSocketErrors = { count: 0, last: null as string | null }

function ownErrors<S extends Duplex | null | undefined>(socket: S): S {
  // A request in flight hears its socket's errors through its own listener too; this one only
  // makes sure that an error between requests, or after one gave up on it, is never unhandled.
  socket?.on('error', (error: NodeJS.ErrnoException) => {
    orphanSocketErrors.count++
    orphanSocketErrors.last = error.code ?? error.name
  })
  return socket
}

class OwnedHttpAgent extends HttpAgent {
  override createConnection(...args: Parameters<HttpAgent['createConnection']>) {
    return ownErrors(super.createConnection(...args))
  }
}

class OwnedHttpsAgent extends HttpsAgent {
  override createConnection(...args: Parameters<HttpsAgent['createConnection']>) {
    return ownErrors(super.createConnection(...args))
  }
}

const AGENT_OPTIONS: AgentOptions = { keepAlive: true }

/** Connections to providers, judges and guards, kept open between calls. */
const agents = {
  http: new OwnedHttpAgent(AGENT_OPTIONS),
  https: new OwnedHttpsAgent(AGENT_OPTIONS),
}

/** The error a call aborted by its signal fails with: named as node:http names its own. */
function abortError(signal: AbortSignal): Error {
  const error = new Error('The operation was aborted', { cause: signal.reason }) as NodeJS.ErrnoException
  error.name = 'AbortError'
  error.code = 'ABORT_ERR'
  return error
}

/**
 * POSTs `payload` (a large one already encoded, so that it is neither measured nor encoded again
 * on the event loop) to `url`, resolving with the response once its head arrives. A keep-alive
 * connection the server closed just as it was reused fails with ECONNRESET before the server saw
 * anything: that is tried once more on a new connection, as Node's documentation advises. A
 * network failure rejects with the system error (its `code`: ECONNREFUSED, ECONNRESET, …).
 *
 * `signal` abandons the call: before the answer's head, the request fails with an AbortError;
 * while its body is arriving, the response is destroyed (its reader sees the stream end early);
 * once the body has fully arrived, nothing happens.
 */
export function postJson(
  url: URL,
  headers: Record<string, string>,
  payload: string | Uint8Array,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength
  const https = url.protocol === 'https:'
  const attempt = (retry: boolean): Promise<IncomingMessage> =>
    new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(abortError(signal))
        return
      }
      const req = (https ? httpsRequest : httpRequest)(url, {
        method: 'POST',
        headers: { ...headers, 'content-length': String(length) },
        agent: https ? agents.https : agents.http,
      })
      let response: IncomingMessage | null = null
      const onAbort = () => {
        if (response === null) req.destroy(abortError(signal))
        else if (!response.complete) response.destroy()
      }
      const detach = () => signal.removeEventListener('abort', onAbort)
      signal.addEventListener('abort', onAbort, { once: true })
      req.once('close', detach)
      req.once('response', (res: IncomingMessage) => {
        response = res
        // The answer is complete, or gone: nothing is left for the signal to abandon.
        res.once('end', detach)
        res.once('close', detach)
        resolve(res)
      })
      req.on('error', (error: NodeJS.ErrnoException) => {
        detach()
        if (retry && req.reusedSocket && error.code === 'ECONNRESET' && !signal.aborted)
          resolve(attempt(false))
        else reject(error)
      })
      req.end(payload)
    })
  return attempt(true)
}

/** The whole body as text, or a rejection once it passes `limit` bytes (the response is destroyed). */
export async function readBody(response: IncomingMessage, limit: number): Promise<string> {
  const decoder = new TextDecoder()
  let text = ''
  let bytes = 0
  for await (const part of response as AsyncIterable<Uint8Array>) {
    bytes += part.byteLength
    if (bytes > limit) {
      response.destroy()
      throw new RangeError(`the answer passed ${limit} bytes`)
    }
    text += decoder.decode(part, { stream: true })
  }
  return text + decoder.decode()
}

/**
 * Lets go of a response a reader stopped reading: one that arrived whole is drained, so that its
 * connection goes back to the pool; one still arriving is destroyed (its connection closed).
 */
export function letGo(response: IncomingMessage): void {
  if (response.complete) response.resume()
  else response.destroy()
}
