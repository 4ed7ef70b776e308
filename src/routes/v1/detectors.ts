import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AUTH_ERRORS, errorResponses } from '../../http/openapi.js'
import { DetectorListSchema } from '../../schemas/detectors.js'
import type { Services } from '../../services/index.js'

export const detectorsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  app.get(
    '/v1/detectors',
    {
      config: { scope: 'policies:read' },
      schema: {
        operationId: 'listDetectors',
        summary: 'List the detectors rules may name',
        description:
          'What a rule’s `detector` may name in this workspace: the offline model, the judge (with whether one is configured), and the guard detectors the operator configured and granted to the workspace, each with the rule types it can score; and `default`, what scores a toxicity or prompt_injection rule that names none. Needs policies:read.',
        tags: ['policies'],
        response: { 200: DetectorListSchema, ...errorResponses(422, ...AUTH_ERRORS) },
      },
    },
    async (request) => services.detectors.list(request.principal.workspaceId),
  )
}
