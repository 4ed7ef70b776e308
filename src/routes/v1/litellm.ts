import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { untilClientLeaves } from '../../http/client-gone.js'
import { limitNesting } from '../../http/nesting.js'
import { AUTH_ERRORS, errorResponses } from '../../http/openapi.js'
import { guardrailAnswer, guardrailConversation } from '../../litellm/guardrail.js'
import { EvaluationParamsSchema } from '../../schemas/evaluations.js'
import { GuardrailRequestSchema, GuardrailResponseSchema } from '../../schemas/litellm.js'
import type { Services } from '../../services/index.js'
import { requestTraceContext } from '../../telemetry/http.js'
import { withContext } from '../../telemetry/index.js'
import { readBodyMessages } from './messages.js'

/** The path LiteLLM appends to a generic guardrail's api_base. */
export const LITELLM_GUARDRAIL_PATH = '/beta/litellm_basic_guardrail_api'

export const litellmRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.post(
    `/v1/applications/:application_id${LITELLM_GUARDRAIL_PATH}`,
    {
      config: { scope: 'evaluations:write' },
      // Fields LiteLLM sends and Warden does not read are not checked inside: their depth is capped here.
      preValidation: limitNesting,
      schema: {
        operationId: 'applyLiteLLMGuardrail',
        summary: 'LiteLLM’s Generic Guardrail API, answered by the application’s policies',
        description:
          'The endpoint of LiteLLM’s Generic Guardrail API (docs/litellm.md): set a generic_guardrail_api guardrail’s api_base to {warden}/v1/applications/{application_id} and its headers to `Authorization: Bearer <a Warden key with evaluations:write>`. The texts (or structured messages) LiteLLM sends are evaluated like an evaluation request, logged with source api, and the outcome answered in LiteLLM’s terms: allow is NONE; override of a reply without tool calls is GUARDRAIL_INTERVENED with the override_response as its text; any other override and every block is BLOCKED, with the override_response or which policies and rules failed (never the matched text) as blocked_reason. Needs evaluations:write.',
        tags: ['integrations'],
        params: EvaluationParamsSchema,
        body: GuardrailRequestSchema,
        response: {
          200: GuardrailResponseSchema,
          ...errorResponses(400, 404, 413, 415, 422, ...AUTH_ERRORS),
        },
      },
    },
    async (request) => {
      const { workspaceId, keyId } = request.principal
      const { messages } = readBodyMessages(guardrailConversation(request.body), '/structured_messages')
      const evaluation = await untilClientLeaves(request, (signal) =>
        withContext(requestTraceContext(request), () =>
          services.evaluations.evaluate(
            { workspaceId, keyId, requestId: String(request.id) },
            request.params.application_id,
            { messages, context: null },
            { signal },
          ),
        ),
      )
      return guardrailAnswer(request.body, evaluation)
    },
  )
}
