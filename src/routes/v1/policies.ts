import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { AUTH_ERRORS, errorResponses, resourceResponse } from '../../http/openapi.js'
import { PolicyCollectionParamsSchema, PolicyCreateSchema, PolicySchema } from '../../schemas/policies.js'
import type { Services } from '../../services/index.js'
import { applicationPath } from './applications.js'

export const policyPath = (applicationId: string, id: string) =>
  `${applicationPath(applicationId)}/policies/${encodeURIComponent(id)}`

export const policiesRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  app.post(
    '/v1/applications/:application_id/policies',
    {
      config: { scope: 'policies:write' },
      schema: {
        operationId: 'createPolicy',
        summary: 'Create a policy for an application',
        description:
          'Attaches a guardrail policy to an application; it starts at revision 1. Each rule type has its own requirements (a regex rule needs an RE2 pattern in `value`, a keywords rule needs `flagged`, a custom rule needs the policy `definition`); anything missing is a 422 pointing at the field. Needs the scope policies:write.',
        tags: ['policies'],
        params: PolicyCollectionParamsSchema,
        body: PolicyCreateSchema,
        response: {
          201: resourceResponse(Type.Ref(PolicySchema), 'The policy was created.', { location: true }),
          ...errorResponses(400, 404, 409, 413, 415, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const applicationId = request.params.application_id
      const { resource, etag } = await services.policies.create(
        request.principal.workspaceId,
        applicationId,
        request.body,
      )
      return reply
        .code(201)
        .header('location', policyPath(applicationId, resource.id))
        .header('etag', `"${etag}"`)
        .send(resource)
    },
  )
}
