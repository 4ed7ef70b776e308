import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { fingerprint, type IdempotencyService } from '../services/idempotency.service.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route honours Idempotency-Key. */
    idempotent?: boolean
  }
  interface FastifyRequest {
    /** The claimed Idempotency-Key, while this request is the one running under it. */
    idempotencyKey: string | null
  }
}

/** Headers of a 2xx answer that a replay must repeat. */
const REPLAYED_HEADERS = ['location', 'etag', 'content-type'] as const

/**
 * Idempotent retries for routes with `config.idempotent`: claim the key once the request is
 * authenticated and valid, replay a stored answer, and store 2xx answers as they go out.
 */
export function installIdempotency(app: FastifyInstance, idempotency: IdempotencyService): void {
  app.decorateRequest('idempotencyKey', null)

  const preHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const key = request.headers['idempotency-key']
    if (key === undefined) return
    const value = Array.isArray(key) ? (key[0] ?? '') : key
    const path = request.url.split('?')[0] ?? request.url
    const stored = await idempotency.begin(
      request.principal.workspaceId,
      value,
      fingerprint(request.method, path.replace(/\/+$/, ''), request.body),
    )
    if (stored) {
      return reply
        .code(stored.status)
        .headers(stored.headers)
        .header('idempotent-replayed', 'true')
        .send(stored.body)
    }
    request.idempotencyKey = value
  }

  const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const key = request.idempotencyKey
    if (!key) return payload
    request.idempotencyKey = null
    const workspaceId = request.principal.workspaceId
    if (reply.statusCode >= 200 && reply.statusCode < 300 && typeof payload === 'string') {
      const headers: Record<string, string> = {}
      for (const name of REPLAYED_HEADERS) {
        const value = reply.getHeader(name)
        if (value !== undefined) headers[name] = String(value)
      }
      await idempotency.complete(workspaceId, key, { status: reply.statusCode, headers, body: payload })
    } else {
      await idempotency.release(workspaceId, key)
    }
    return payload
  }

  // Route-level hooks, on the routes that honour the header only: the others pay nothing.
  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return
    route.preHandler = [...asArray(route.preHandler), preHandler] as typeof route.preHandler
    route.onSend = [...asArray(route.onSend), onSend] as typeof route.onSend
  })
}

const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value]
