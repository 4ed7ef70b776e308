import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { AUTH_ERRORS, errorResponses, resourceResponse } from '../../http/openapi.js'
import { ApplicationCreateSchema, ApplicationSchema } from '../../schemas/applications.js'
import type { Services } from '../../services/index.js'

export const applicationPath = (id: string) => `/v1/applications/${encodeURIComponent(id)}`

export const applicationsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  app.post(
    '/v1/applications',
    {
      config: { scope: 'applications:write' },
      schema: {
        operationId: 'createApplication',
        summary: 'Create an application',
        description:
          'Registers an LLM-backed application. Without an `id`, the server assigns a UUIDv7. `created` and `updated` in the body are accepted and ignored. Needs the scope applications:write.',
        tags: ['applications'],
        body: ApplicationCreateSchema,
        response: {
          201: resourceResponse(Type.Ref(ApplicationSchema), 'The application was created.', {
            location: true,
          }),
          ...errorResponses(400, 409, 413, 415, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { resource, etag } = await services.applications.create(
        request.principal.workspaceId,
        request.body,
      )
      return reply
        .code(201)
        .header('location', applicationPath(resource.id))
        .header('etag', `"${etag}"`)
        .send(resource)
    },
  )
}
