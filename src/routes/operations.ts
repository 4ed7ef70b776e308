import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import { AppError } from '../errors.js'
import { errorResponses } from '../http/openapi.js'
import { sendJson } from '../http/send.js'

const StatusSchema = Type.Object(
  { status: Type.String({ description: 'ok when healthy.', examples: ['ok'] }) },
  { additionalProperties: false },
)

/**
 * The answer of a healthy /healthz or /readyz, sent as text: the first health check after start-up
 * does not wait for a serialiser to be compiled.
 */
const OK = JSON.stringify({ status: 'ok' })

/**
 * Unauthenticated operational endpoints: liveness, readiness, the OpenAPI document. `ready`
 * resolves when the store answers.
 */
export const operationsRoutes: FastifyPluginAsync<{ ready: () => Promise<void> }> = async (
  app,
  { ready },
) => {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'getHealth',
        summary: 'Liveness: the process is up',
        tags: ['operations'],
        security: [],
        response: { 200: StatusSchema },
      },
    },
    async (_request, reply) => sendJson(reply, OK),
  )

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        summary: 'Readiness: the store answers',
        description: 'A load balancer sends traffic only while this answers 200.',
        tags: ['operations'],
        security: [],
        response: { 200: StatusSchema, ...errorResponses(503) },
      },
    },
    async (_request, reply) => {
      try {
        await ready()
      } catch {
        throw new AppError('unavailable', 'The store is unreachable')
      }
      return sendJson(reply, OK)
    },
  )

  app.get(
    '/openapi.json',
    {
      schema: {
        operationId: 'getOpenApi',
        summary: 'This API as an OpenAPI 3.1 document',
        tags: ['operations'],
        security: [],
      },
    },
    async () => app.swagger(),
  )
}
