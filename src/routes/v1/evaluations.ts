import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { untilClientLeaves } from '../../http/client-gone.js'
import { AUTH_ERRORS, errorResponses, resourceResponse } from '../../http/openapi.js'
import { memberBodies, refuseInvalidPolicyBodies } from '../../http/rule-errors.js'
import { sendJson } from '../../http/send.js'
import {
  EvaluationListQuerySchema,
  EvaluationParamsSchema,
  EvaluationRequestSchema,
  EvaluationSchema,
  LoggedEvaluationPageSchema,
  LoggedEvaluationParamsSchema,
  LoggedEvaluationSchema,
} from '../../schemas/evaluations.js'
import type { Services } from '../../services/index.js'
import { requestTraceContext } from '../../telemetry/http.js'
import { withContext } from '../../telemetry/index.js'
import { readBodyMessages } from './messages.js'

const tags = ['evaluations']

export const evaluationsRoutes: FastifyPluginAsyncTypebox<{
  services: Services
  /** The evaluation body's limit (EVALUATIONS_BODY_LIMIT_BYTES): conversations may carry images, audio and files. */
  bodyLimit: number
}> = async (app, { services, bodyLimit }) => {
  app.post(
    '/v1/applications/:application_id/evaluations',
    {
      config: { scope: 'evaluations:write' },
      bodyLimit,
      attachValidation: true,
      preHandler: refuseInvalidPolicyBodies(memberBodies('draft_policies')),
      schema: {
        operationId: 'createEvaluation',
        summary: 'Evaluate a conversation against the application’s policies',
        description:
          'Evaluates one conversation against the application’s policies (all of them in creation order, or those named in `policies`, at pinned revisions if asked, then any `draft_policies`) and answers the outcome: the verdict, the action to take (allow, override with the policy’s override_response, or block), and for every policy and rule its status, score, method and findings with their code-point offsets. Call it before sending a prompt to the model (the conversation ends with the user turn) and after the model answered (it ends with the reply). A rule that cannot be evaluated is reported as `error` and counts by the policy’s on_error; it never fails the request. Needs evaluations:write.',
        tags,
        params: EvaluationParamsSchema,
        body: EvaluationRequestSchema,
        response: {
          200: {
            description: 'The outcome of the evaluation.',
            content: { 'application/json': { schema: Type.Ref(EvaluationSchema) } },
          },
          ...errorResponses(400, 404, 413, 415, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request) => {
      const { workspaceId, keyId } = request.principal
      const { messages, notRead } = readBodyMessages(request.body.messages)
      const answer = await untilClientLeaves(request, (signal) =>
        withContext(requestTraceContext(request), () =>
          services.evaluations.evaluate(
            { workspaceId, keyId, requestId: String(request.id) },
            request.params.application_id,
            { ...request.body, messages },
            { signal, sent: request.body.messages },
          ),
        ),
      )
      return notRead.length > 0 ? { ...answer, not_read: notRead } : answer
    },
  )

  app.get(
    '/v1/applications/:application_id/evaluations',
    {
      config: { scope: 'evaluations:read' },
      schema: {
        operationId: 'listEvaluations',
        summary: 'List the application’s logged evaluations',
        description:
          'Pages through the evaluation log of the application, newest first: every evaluation it answered, with who asked and the conversation as EVALUATION_LOG_CONTENT keeps it (redacted by default). Filters combine: `verdict`, `policy_id` (evaluations that evaluated that policy), `since` and `until` (Unix seconds, inclusive). No entry is skipped or repeated while new ones are logged during a walk. Entries older than EVALUATION_RETENTION_DAYS are deleted. Needs evaluations:read.',
        tags,
        params: EvaluationParamsSchema,
        querystring: EvaluationListQuerySchema,
        response: { 200: LoggedEvaluationPageSchema, ...errorResponses(404, 422, ...AUTH_ERRORS) },
      },
    },
    async (request, reply) =>
      sendJson(
        reply,
        await services.evaluationLog.list(
          request.principal.workspaceId,
          request.params.application_id,
          request.query,
        ),
      ),
  )

  app.get(
    '/v1/applications/:application_id/evaluations/:evaluation_id',
    {
      config: { scope: 'evaluations:read' },
      schema: {
        operationId: 'getEvaluation',
        summary: 'Get a logged evaluation',
        description:
          'One entry of the evaluation log, by the id its answer carried. Entries never change; the ETag is the id. Needs evaluations:read.',
        tags,
        params: LoggedEvaluationParamsSchema,
        response: {
          200: resourceResponse(Type.Ref(LoggedEvaluationSchema), 'The logged evaluation.'),
          ...errorResponses(404, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const entry = await services.evaluationLog.get(
        request.principal.workspaceId,
        request.params.application_id,
        request.params.evaluation_id,
      )
      return sendJson(reply, entry.json, entry.etag)
    },
  )
}
