import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { AUTH_ERRORS, errorResponses, resourceResponse } from '../../http/openapi.js'
import { sendJson } from '../../http/send.js'
import {
  ApplicationCreateSchema,
  ApplicationPageSchema,
  ApplicationParamsSchema,
  ApplicationPatchSchema,
  ApplicationSchema,
} from '../../schemas/applications.js'
import { IdempotencyHeaderSchema, IfMatchHeaderSchema, ListQuerySchema } from '../../schemas/common.js'
import type { Services } from '../../services/index.js'

export const applicationPath = (id: string) => `/v1/applications/${encodeURIComponent(id)}`
const tags = ['applications']
const applicationRef = Type.Ref(ApplicationSchema)

export const applicationsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  app.post(
    '/v1/applications',
    {
      config: { scope: 'applications:write', idempotent: true },
      schema: {
        operationId: 'createApplication',
        summary: 'Create an application',
        description:
          'Registers an LLM-backed application. Without an `id`, the server assigns a UUIDv7. `created` and `updated` in the body are accepted and ignored. Honours Idempotency-Key. Needs applications:write.',
        tags,
        headers: IdempotencyHeaderSchema,
        body: ApplicationCreateSchema,
        response: {
          201: resourceResponse(applicationRef, 'The application was created.', { location: true }),
          ...errorResponses(400, 409, 413, 415, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const stored = await services.applications.create(request.principal.workspaceId, request.body)
      reply.code(201).header('location', applicationPath(stored.id))
      return sendJson(reply, stored.json, stored.etag)
    },
  )

  app.get(
    '/v1/applications',
    {
      config: { scope: 'applications:read' },
      schema: {
        operationId: 'listApplications',
        summary: 'List applications',
        description:
          'Pages through the workspace in creation order. No record is skipped or repeated while others are created or deleted during a walk. Needs applications:read.',
        tags,
        querystring: ListQuerySchema,
        response: { 200: ApplicationPageSchema, ...errorResponses(422, ...AUTH_ERRORS) },
      },
    },
    async (request, reply) =>
      sendJson(
        reply,
        await services.applications.list(
          request.principal.workspaceId,
          request.query.limit ?? 50,
          request.query.cursor,
        ),
      ),
  )

  app.get(
    '/v1/applications/:application_id',
    {
      config: { scope: 'applications:read' },
      schema: {
        operationId: 'getApplication',
        summary: 'Get an application',
        description: 'Needs applications:read.',
        tags,
        params: ApplicationParamsSchema,
        response: {
          200: resourceResponse(applicationRef, 'The application.'),
          ...errorResponses(404, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const stored = await services.applications.get(
        request.principal.workspaceId,
        request.params.application_id,
      )
      return sendJson(reply, stored.json, stored.etag)
    },
  )

  app.patch(
    '/v1/applications/:application_id',
    {
      config: { scope: 'applications:write' },
      schema: {
        operationId: 'updateApplication',
        summary: 'Update an application',
        description:
          'A JSON merge patch (RFC 7396) of name, description, provider, model and parameters: `parameters` merges key by key, and `null` clears a field. The result is validated like a create. With If-Match, the change applies only to that version (else 412). Needs applications:write.',
        tags,
        params: ApplicationParamsSchema,
        headers: IfMatchHeaderSchema,
        body: ApplicationPatchSchema,
        response: {
          200: resourceResponse(applicationRef, 'The application after the change.'),
          ...errorResponses(400, 404, 412, 413, 415, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const stored = await services.applications.patch(
        request.principal.workspaceId,
        request.params.application_id,
        request.body,
        request.headers['if-match'],
      )
      return sendJson(reply, stored.json, stored.etag)
    },
  )

  app.delete(
    '/v1/applications/:application_id',
    {
      config: { scope: 'applications:write' },
      schema: {
        operationId: 'deleteApplication',
        summary: 'Delete an application and its policies',
        description:
          'Deletes the application together with its policies and their revisions, in one transaction. Honours If-Match. Needs applications:write.',
        tags,
        params: ApplicationParamsSchema,
        headers: IfMatchHeaderSchema,
        response: {
          204: { description: 'Deleted.', type: 'null' },
          ...errorResponses(404, 412, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request, reply) => {
      await services.applications.delete(
        request.principal.workspaceId,
        request.params.application_id,
        request.headers['if-match'],
      )
      return reply.code(204).send()
    },
  )
}
