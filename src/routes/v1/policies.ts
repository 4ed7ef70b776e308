import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { AUTH_ERRORS, errorResponses, resourceResponse } from '../../http/openapi.js'
import { refuseInvalidPolicyBodies, wholeBody } from '../../http/rule-errors.js'
import { sendJson } from '../../http/send.js'
import { IdempotencyHeaderSchema, IfMatchHeaderSchema, ListQuerySchema } from '../../schemas/common.js'
import {
  PolicyCollectionParamsSchema,
  PolicyCreateSchema,
  PolicyPageSchema,
  PolicyParamsSchema,
  PolicyPatchSchema,
  PolicyRevisionPageSchema,
  PolicyRevisionParamsSchema,
  PolicySchema,
} from '../../schemas/policies.js'
import { PolicyPatchQuerySchema } from '../../schemas/policy-tests.js'
import type { Services } from '../../services/index.js'
import { applicationPath } from './applications.js'

export const policyPath = (applicationId: string, id: string) =>
  `${applicationPath(applicationId)}/policies/${encodeURIComponent(id)}`
const tags = ['policies']
const policyRef = Type.Ref(PolicySchema)

export const policiesRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  app.post(
    '/v1/applications/:application_id/policies',
    {
      config: { scope: 'policies:write', idempotent: true },
      attachValidation: true,
      preHandler: refuseInvalidPolicyBodies(wholeBody),
      schema: {
        operationId: 'createPolicy',
        summary: 'Create a policy for an application',
        description:
          'Attaches a guardrail policy to an application; it starts at revision 1. Each rule type has its own requirements (a regex rule needs an RE2 pattern in `value`, a keywords rule needs `flagged`, a custom rule needs the policy `definition`); anything missing is a 422 pointing at the field. Honours Idempotency-Key. Needs policies:write.',
        tags,
        params: PolicyCollectionParamsSchema,
        headers: IdempotencyHeaderSchema,
        body: PolicyCreateSchema,
        response: {
          201: resourceResponse(policyRef, 'The policy was created.', { location: true }),
          ...errorResponses(400, 404, 409, 413, 415, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const applicationId = request.params.application_id
      const stored = await services.policies.create(
        request.principal.workspaceId,
        applicationId,
        request.body,
      )
      reply.code(201).header('location', policyPath(applicationId, stored.id))
      return sendJson(reply, stored.json, stored.etag)
    },
  )

  app.get(
    '/v1/applications/:application_id/policies',
    {
      config: { scope: 'policies:read' },
      schema: {
        operationId: 'listPolicies',
        summary: "List an application's policies",
        description: 'Pages through the policies in creation order. Needs policies:read.',
        tags,
        params: PolicyCollectionParamsSchema,
        querystring: ListQuerySchema,
        response: { 200: PolicyPageSchema, ...errorResponses(404, 422, ...AUTH_ERRORS) },
      },
    },
    async (request, reply) =>
      sendJson(
        reply,
        await services.policies.list(
          request.principal.workspaceId,
          request.params.application_id,
          request.query.limit ?? 50,
          request.query.cursor,
        ),
      ),
  )

  app.get(
    '/v1/applications/:application_id/policies/:policy_id',
    {
      config: { scope: 'policies:read' },
      schema: {
        operationId: 'getPolicy',
        summary: 'Get a policy',
        description: 'The current version. Needs policies:read.',
        tags,
        params: PolicyParamsSchema,
        response: {
          200: resourceResponse(policyRef, 'The policy.'),
          ...errorResponses(404, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { application_id, policy_id } = request.params
      const stored = await services.policies.get(request.principal.workspaceId, application_id, policy_id)
      return sendJson(reply, stored.json, stored.etag)
    },
  )

  app.patch(
    '/v1/applications/:application_id/policies/:policy_id',
    {
      config: { scope: 'policies:write' },
      attachValidation: true,
      preHandler: refuseInvalidPolicyBodies(wholeBody, true),
      schema: {
        operationId: 'updatePolicy',
        summary: 'Update a policy',
        description:
          'A JSON merge patch (RFC 7396) of rules, target, definition, override_response, mode and on_error (`rules` and `target` are replaced whole). The result is validated like a create, and stored as a new revision (revision + 1). When the policy has test cases, they run against the changed policy first, and a change that breaks one is refused with 409 tests_failed, the problem listing the failing cases in `failures`; `?skip_tests=true` makes the change anyway. With If-Match, the change applies only to that version (else 412). Needs policies:write.',
        tags,
        params: PolicyParamsSchema,
        headers: IfMatchHeaderSchema,
        querystring: PolicyPatchQuerySchema,
        body: PolicyPatchSchema,
        response: {
          200: resourceResponse(policyRef, 'The policy after the change.'),
          ...errorResponses(400, 404, 412, 413, 415, 422, ...AUTH_ERRORS),
          409: {
            ...errorResponses(409)[409],
            description:
              'The change breaks test cases of the policy; `failures` lists them as a test run reports them (tests_failed).',
          },
        },
      },
    },
    async (request, reply) => {
      const { application_id, policy_id } = request.params
      const stored = await services.policies.patch(
        request.principal.workspaceId,
        application_id,
        policy_id,
        request.body,
        request.headers['if-match'],
        { skipTests: request.query.skip_tests === true },
      )
      return sendJson(reply, stored.json, stored.etag)
    },
  )

  app.delete(
    '/v1/applications/:application_id/policies/:policy_id',
    {
      config: { scope: 'policies:write' },
      schema: {
        operationId: 'deletePolicy',
        summary: 'Delete a policy and its history',
        description: 'Deletes the policy and all its revisions. Honours If-Match. Needs policies:write.',
        tags,
        params: PolicyParamsSchema,
        headers: IfMatchHeaderSchema,
        response: {
          204: { description: 'Deleted.', type: 'null' },
          ...errorResponses(404, 412, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { application_id, policy_id } = request.params
      await services.policies.delete(
        request.principal.workspaceId,
        application_id,
        policy_id,
        request.headers['if-match'],
      )
      return reply.code(204).send()
    },
  )

  app.get(
    '/v1/applications/:application_id/policies/:policy_id/revisions',
    {
      config: { scope: 'policies:read' },
      schema: {
        operationId: 'listPolicyRevisions',
        summary: "List a policy's revisions",
        description: 'Every version of the policy, past and current, newest first. Needs policies:read.',
        tags,
        params: PolicyParamsSchema,
        querystring: ListQuerySchema,
        response: { 200: PolicyRevisionPageSchema, ...errorResponses(404, 422, ...AUTH_ERRORS) },
      },
    },
    async (request) => {
      const { application_id, policy_id } = request.params
      return services.policies.listRevisions(
        request.principal.workspaceId,
        application_id,
        policy_id,
        request.query.limit ?? 50,
        request.query.cursor,
      )
    },
  )

  app.get(
    '/v1/applications/:application_id/policies/:policy_id/revisions/:revision',
    {
      config: { scope: 'policies:read' },
      schema: {
        operationId: 'getPolicyRevision',
        summary: 'Get one revision of a policy',
        description: 'The policy as it was at that revision. Needs policies:read.',
        tags,
        params: PolicyRevisionParamsSchema,
        response: { 200: policyRef, ...errorResponses(404, 422, ...AUTH_ERRORS) },
      },
    },
    async (request) => {
      const { application_id, policy_id, revision } = request.params
      return services.policies.getRevision(request.principal.workspaceId, application_id, policy_id, revision)
    },
  )
}
