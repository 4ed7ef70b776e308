import { Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../../errors.js'
import { sendJson } from '../../http/send.js'
import type { Action } from '../../proxy/completions.js'
import { ClientGoneError } from '../../proxy/upstream.js'
import type { EvaluationCaller } from '../../services/evaluations.service.js'
import { requestTraceContext } from '../../telemetry/http.js'
import { iterateInContext, withContext } from '../../telemetry/index.js'

/** A guarded proxy's answer, ready to send: JSON, or server-sent events. */
export interface GuardedAnswer {
  /** What Warden did (X-Warden-Action); null for a stream released as it grows. */
  action: Action | null
  stream: boolean
  body: string | AsyncIterable<string>
}

/** How a guarded route asks its service: the caller, and the abandon signal and stream choice. */
export type GuardedCall = (
  caller: EvaluationCaller,
  options: { signal: AbortSignal; buffered: boolean },
) => Promise<GuardedAnswer>

/**
 * Runs one guarded proxy request (chat completions, responses) and sends its answer: JSON, a
 * buffered stream, or a stream released as it grows. A client that goes away abandons the
 * evaluations and the upstream call still under way, mid-stream too.
 */
export async function sendGuarded(
  request: FastifyRequest,
  reply: FastifyReply,
  call: GuardedCall,
): Promise<FastifyReply> {
  const abandoned = new AbortController()
  const onClose = () => {
    if (!reply.raw.writableEnded) abandoned.abort()
  }
  reply.raw.once('close', onClose)
  let streaming = false
  try {
    const { workspaceId, keyId } = request.principal
    const traced = requestTraceContext(request)
    const answer = await withContext(traced, () =>
      call(
        { workspaceId, keyId, requestId: String(request.id) },
        {
          signal: abandoned.signal,
          buffered: String(request.headers['x-warden-stream'] ?? '').toLowerCase() === 'buffered',
        },
      ),
    )
    // A stream released as it grows has no decision yet: a header that may lie is not sent.
    if (answer.action !== null) reply.header('x-warden-action', answer.action)
    if (!answer.stream && typeof answer.body === 'string') return sendJson(reply, answer.body)
    reply.header('content-type', 'text/event-stream; charset=utf-8').header('cache-control', 'no-cache')
    if (typeof answer.body === 'string') return reply.send(answer.body)
    // Released as the reply grows: each event is written as soon as it is made.
    reply.header('x-accel-buffering', 'no')
    // A client that goes away mid-stream abandons the upstream call: the listener stays.
    streaming = true
    return reply.send(Readable.from(iterateInContext(traced, answer.body), { objectMode: false }))
  } catch (error) {
    if (error instanceof ClientGoneError)
      throw new AppError('upstream_error', 'The client closed the connection; the model call was abandoned')
    throw error
  } finally {
    if (!streaming) reply.raw.off('close', onClose)
  }
}
