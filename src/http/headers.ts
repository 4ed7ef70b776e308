import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * Headers every answer carries: the request id, no content sniffing, and no caching of /v1
 * answers (they are authenticated).
 */
export function setStandardHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id)
  reply.header('x-content-type-options', 'nosniff')
  if (request.url.startsWith('/v1')) reply.header('cache-control', 'no-store')
}
