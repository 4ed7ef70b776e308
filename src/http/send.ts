import type { FastifyReply } from 'fastify'

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * Sends JSON text as it is, with the entity tag of the version it shows, if any. The text is a
 * stored document (store/documents.ts) or a page of them: Fastify passes a string sent as
 * JSON through unserialised.
 */
export function sendJson(reply: FastifyReply, json: string, etag?: string): FastifyReply {
  reply.header('content-type', JSON_TYPE)
  if (etag !== undefined) reply.header('etag', `"${etag}"`)
  return reply.send(json)
}
