import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { AUTH_ERRORS, errorResponses } from '../../http/openapi.js'
import {
  ApiKeyCreatedSchema,
  ApiKeyCreateSchema,
  ApiKeyPageSchema,
  ApiKeyParamsSchema,
} from '../../schemas/api-keys.js'
import { IdempotencyHeaderSchema, ListQuerySchema } from '../../schemas/common.js'
import type { Services } from '../../services/index.js'

const tags = ['api-keys']

export const apiKeysRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.post(
    '/v1/api-keys',
    {
      config: { scope: 'admin', idempotent: true },
      schema: {
        operationId: 'createApiKey',
        summary: 'Create an API key',
        description:
          "Creates a key in the caller's workspace. The secret (`key`) is in this answer only: Warden keeps just its hash. Honours Idempotency-Key. Needs admin.",
        tags,
        headers: IdempotencyHeaderSchema,
        body: ApiKeyCreateSchema,
        response: {
          201: {
            description: 'The key was created; store the secret now.',
            headers: {
              Location: {
                type: 'string',
                description: 'Path of the new key.',
                examples: ['/v1/api-keys/019ab2c4'],
              },
            },
            content: { 'application/json': { schema: Type.Ref(ApiKeyCreatedSchema) } },
          },
          ...errorResponses(400, 413, 415, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const created = await services.apiKeys.create(request.principal.workspaceId, request.body)
      return reply.code(201).header('location', `/v1/api-keys/${created.id}`).send(created)
    },
  )

  app.get(
    '/v1/api-keys',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'listApiKeys',
        summary: 'List API keys',
        description: "The workspace's keys, revoked ones included, never their secrets. Needs admin.",
        tags,
        querystring: ListQuerySchema,
        response: { 200: ApiKeyPageSchema, ...errorResponses(422, ...AUTH_ERRORS) },
      },
    },
    async (request) =>
      services.apiKeys.listPage(
        request.principal.workspaceId,
        request.query.limit ?? 50,
        request.query.cursor,
      ),
  )

  app.delete(
    '/v1/api-keys/:key_id',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key',
        description:
          'The key stops working on its very next request. Revoking a revoked key is a no-op. Needs admin.',
        tags,
        params: ApiKeyParamsSchema,
        response: {
          204: { description: 'Revoked.', type: 'null' },
          ...errorResponses(404, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request, reply) => {
      await services.apiKeys.revoke(request.principal.workspaceId, request.params.key_id)
      return reply.code(204).send()
    },
  )
}
