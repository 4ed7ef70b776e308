import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { untilClientLeaves } from '../../http/client-gone.js'
import { AUTH_ERRORS, errorResponses, resourceResponse } from '../../http/openapi.js'
import { memberBody, refuseInvalidPolicyBodies } from '../../http/rule-errors.js'
import { sendJson } from '../../http/send.js'
import { IdempotencyHeaderSchema, IfMatchHeaderSchema, ListQuerySchema } from '../../schemas/common.js'
import {
  MAX_TESTS_PER_POLICY,
  PolicyTestCollectionParamsSchema,
  PolicyTestCreateSchema,
  PolicyTestPageSchema,
  PolicyTestParamsSchema,
  type PolicyTestPatch,
  type PolicyTestPatchBody,
  PolicyTestPatchSchema,
  PolicyTestRunRequestSchema,
  PolicyTestRunSchema,
  PolicyTestSchema,
} from '../../schemas/policy-tests.js'
import type { Services } from '../../services/index.js'
import { requestTraceContext } from '../../telemetry/http.js'
import { withContext } from '../../telemetry/index.js'
import { readTestCaseMessages } from './messages.js'
import { policyPath } from './policies.js'

/** A patch whose messages, when sent, are read as the service reads them. */
function patchWithReadableMessages(body: PolicyTestPatchBody): PolicyTestPatch {
  const { messages, ...rest } = body
  return messages === undefined ? rest : { ...rest, messages: readTestCaseMessages(messages) }
}

export const policyTestPath = (applicationId: string, policyId: string, id: string) =>
  `${policyPath(applicationId, policyId)}/tests/${encodeURIComponent(id)}`
const tags = ['policy-tests']
const testRef = Type.Ref(PolicyTestSchema)
const COLLECTION = '/v1/applications/:application_id/policies/:policy_id/tests'
const ONE = `${COLLECTION}/:test_id`

export const policyTestsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  app.post(
    COLLECTION,
    {
      config: { scope: 'policies:write', idempotent: true },
      schema: {
        operationId: 'createPolicyTest',
        summary: 'Add a test case to a policy',
        description: `Stores a conversation with the verdict the policy must give it (and, optionally, the status some of its rules must have). From then on a PATCH of the policy runs the case against the changed policy first and refuses a change that breaks it (409 tests_failed). \`messages\` and \`context\` are validated exactly as in an evaluation request. A policy holds at most ${MAX_TESTS_PER_POLICY} cases (409 beyond). Honours Idempotency-Key. Needs policies:write.`,
        tags,
        params: PolicyTestCollectionParamsSchema,
        headers: IdempotencyHeaderSchema,
        body: PolicyTestCreateSchema,
        response: {
          201: resourceResponse(testRef, 'The test case was created.', { location: true }),
          ...errorResponses(400, 404, 409, 413, 415, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { application_id, policy_id } = request.params
      const stored = await services.policyTests.create(
        request.principal.workspaceId,
        application_id,
        policy_id,
        { ...request.body, messages: readTestCaseMessages(request.body.messages) },
      )
      reply.code(201).header('location', policyTestPath(application_id, policy_id, stored.id))
      return sendJson(reply, stored.json, stored.etag)
    },
  )

  app.get(
    COLLECTION,
    {
      config: { scope: 'policies:read' },
      schema: {
        operationId: 'listPolicyTests',
        summary: "List a policy's test cases",
        description: 'Pages through the test cases in creation order. Needs policies:read.',
        tags,
        params: PolicyTestCollectionParamsSchema,
        querystring: ListQuerySchema,
        response: { 200: PolicyTestPageSchema, ...errorResponses(404, 422, ...AUTH_ERRORS) },
      },
    },
    async (request, reply) => {
      const { application_id, policy_id } = request.params
      return sendJson(
        reply,
        await services.policyTests.list(
          request.principal.workspaceId,
          application_id,
          policy_id,
          request.query.limit ?? 50,
          request.query.cursor,
        ),
      )
    },
  )

  app.get(
    ONE,
    {
      config: { scope: 'policies:read' },
      schema: {
        operationId: 'getPolicyTest',
        summary: 'Get a test case',
        description: 'Needs policies:read.',
        tags,
        params: PolicyTestParamsSchema,
        response: {
          200: resourceResponse(testRef, 'The test case.'),
          ...errorResponses(404, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { application_id, policy_id, test_id } = request.params
      const stored = await services.policyTests.get(
        request.principal.workspaceId,
        application_id,
        policy_id,
        test_id,
      )
      return sendJson(reply, stored.json, stored.etag)
    },
  )

  app.patch(
    ONE,
    {
      config: { scope: 'policies:write' },
      schema: {
        operationId: 'updatePolicyTest',
        summary: 'Update a test case',
        description:
          'A JSON merge patch (RFC 7396) of name, messages, context and expected (`messages` and `expected.rules` are replaced whole). A case may be changed to one the policy fails: that is how a tightening starts. With If-Match, the change applies only to that version (else 412). Needs policies:write.',
        tags,
        params: PolicyTestParamsSchema,
        headers: IfMatchHeaderSchema,
        body: PolicyTestPatchSchema,
        response: {
          200: resourceResponse(testRef, 'The test case after the change.'),
          ...errorResponses(400, 404, 412, 413, 415, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { application_id, policy_id, test_id } = request.params
      const stored = await services.policyTests.patch(
        request.principal.workspaceId,
        application_id,
        policy_id,
        test_id,
        patchWithReadableMessages(request.body),
        request.headers['if-match'],
      )
      return sendJson(reply, stored.json, stored.etag)
    },
  )

  app.delete(
    ONE,
    {
      config: { scope: 'policies:write' },
      schema: {
        operationId: 'deletePolicyTest',
        summary: 'Delete a test case',
        description: 'Honours If-Match. Needs policies:write.',
        tags,
        params: PolicyTestParamsSchema,
        headers: IfMatchHeaderSchema,
        response: {
          204: { description: 'Deleted.', type: 'null' },
          ...errorResponses(404, 412, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { application_id, policy_id, test_id } = request.params
      await services.policyTests.delete(
        request.principal.workspaceId,
        application_id,
        policy_id,
        test_id,
        request.headers['if-match'],
      )
      return reply.code(204).send()
    },
  )

  app.post(
    '/v1/applications/:application_id/policies/:policy_id/test-runs',
    {
      config: { scope: 'policies:read' },
      attachValidation: true,
      preHandler: refuseInvalidPolicyBodies(memberBody('draft')),
      schema: {
        operationId: 'runPolicyTests',
        summary: "Run a policy's test cases",
        description:
          'Evaluates every test case of the policy against its current revision (body `{}`) or against a draft body (`{"draft": …}`, validated like a create; nothing is stored), and answers each case’s outcome with the full evaluation, and a summary. A case passes when the verdict matches and every listed rule has the listed status; a case that needs a judge while none is configured is skipped, never failed. Test runs are not logged as evaluations. Needs policies:read.',
        tags,
        params: PolicyTestCollectionParamsSchema,
        body: PolicyTestRunRequestSchema,
        response: {
          200: {
            description: 'The outcome of every case.',
            content: { 'application/json': { schema: Type.Ref(PolicyTestRunSchema) } },
          },
          ...errorResponses(400, 404, 413, 415, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request) =>
      untilClientLeaves(request, (signal) =>
        withContext(requestTraceContext(request), () =>
          services.policyTests.run(
            request.principal.workspaceId,
            request.params.application_id,
            request.params.policy_id,
            request.body,
            signal,
          ),
        ),
      ),
  )
}
