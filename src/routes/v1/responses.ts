import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ProviderDirectory } from '../../config.js'
import { limitNesting } from '../../http/nesting.js'
import { AUTH_ERRORS, problemResponses } from '../../http/openapi.js'
import { sendJson } from '../../http/send.js'
import { setAsideExtraFields } from '../../proxy/extra-fields.js'
import { ChatCompletionProblemSchema } from '../../schemas/chat-completions.js'
import { ResponseSchema, ResponsesParamsSchema, ResponsesRequestSchema } from '../../schemas/responses.js'
import type { Services } from '../../services/index.js'
import { sendGuarded } from './guarded-answer.js'

const tags = ['responses']

/** OpenAI's model list, as `GET /v1/models` answers it. */
const ModelListSchema = Type.Object(
  {
    object: Type.Literal('list', { description: 'Always list.', examples: ['list'] }),
    data: Type.Array(
      Type.Object({
        id: Type.String({ description: 'The application’s model.', examples: ['gpt-4o-mini'] }),
        object: Type.Literal('model', { description: 'Always model.', examples: ['model'] }),
        created: Type.Integer({
          description: 'The application’s creation time, Unix seconds.',
          examples: [1767225600],
        }),
        owned_by: Type.String({ description: 'The application’s provider.', examples: ['openai'] }),
      }),
      {
        description: 'The application’s model; empty when it has none.',
        examples: [[{ id: 'gpt-4o-mini', object: 'model', created: 1767225600, owned_by: 'openai' }]],
      },
    ),
  },
  { additionalProperties: false },
)

export const responsesRoutes: FastifyPluginAsyncTypebox<{
  services: Services
  bodyLimit: number
  providers: Pick<ProviderDirectory, 'extraFields'>
}> = async (app, { services, bodyLimit, providers }) => {
  const known = new Set(Object.keys(ResponsesRequestSchema.properties))

  app.get(
    '/v1/applications/:application_id/models',
    {
      config: { scope: 'evaluations:write', openaiErrors: true },
      schema: {
        operationId: 'listApplicationModels',
        summary: 'OpenAI’s model list for the application: its model',
        description:
          'For OpenAI SDKs and agent frameworks that list models first, with `baseURL = {warden}/v1/applications/{application_id}`: the application’s `model` as the one model (none when it has no model). Errors carry OpenAI’s `error` member. Needs evaluations:write, as the guarded routes.',
        tags,
        params: ResponsesParamsSchema,
        response: {
          200: ModelListSchema,
          ...problemResponses(Type.Ref(ChatCompletionProblemSchema), [404, 422, ...AUTH_ERRORS]),
        },
      },
    },
    async (request, reply) => {
      const { workspaceId, keyId } = request.principal
      const list = await services.responses.models(
        { workspaceId, keyId, requestId: String(request.id) },
        request.params.application_id,
      )
      return sendJson(reply, JSON.stringify(list))
    },
  )

  app.post(
    '/v1/applications/:application_id/responses',
    {
      config: { scope: 'evaluations:write', openaiErrors: true },
      bodyLimit,
      preValidation: [limitNesting, setAsideExtraFields(providers, known)],
      schema: {
        operationId: 'createResponse',
        summary: 'A response from the application’s model (OpenAI’s Responses API), guarded by its policies',
        description:
          'Takes an OpenAI Responses request and answers like OpenAI, so OpenAI’s SDKs, the Agents SDK and the AI SDK work with `baseURL = {warden}/v1/applications/{application_id}` (docs/agents.md). The request goes to the provider’s `/responses` with the application’s model and parameters as defaults (system_prompt as `instructions` when the request has none). The policies read `instructions` and system/developer messages as system, user messages as user (the last as input), assistant messages and function_call arguments as assistant, function_call_output items as context (untrusted tool results), and the response’s output text and function-call arguments as output; parts that are not text and other items are passed on and named in `warden.not_read`. With previous_response_id, the earlier turns live at the provider and only the items sent are evaluated. An input violation answers a response whose output is one assistant message holding the override_response (empty for block), status incomplete with incomplete_details.reason content_filter, the upstream not called; an output violation replaces the output the same way; mask rules mask the items sent upstream and the reply gets the values back (docs/masking.md). `stream: true` answers OpenAI’s Responses events, text released as chat completions’ is, each function call only once the whole reply passed; a violation ends with the override as a message item and response.incomplete. Every answer carries `warden` (in a stream, on the terminal event’s response). Top-level fields the provider takes beyond OpenAI’s API (PROVIDER_<NAME>_EXTRA_FIELDS) are passed on; any other unknown field is a 422. Errors are problem+json with OpenAI’s `error` member. Needs evaluations:write.',
        tags,
        params: ResponsesParamsSchema,
        body: ResponsesRequestSchema,
        response: {
          200: {
            description:
              'The response (application/json), or with `stream: true` OpenAI’s Responses server-sent events (text/event-stream).',
            content: {
              'application/json': { schema: ResponseSchema },
              'text/event-stream': {
                schema: {
                  type: 'string',
                  description:
                    'OpenAI’s Responses events (`event: response.created`, …, `response.completed`).',
                },
              },
            },
          },
          ...problemResponses(Type.Ref(ChatCompletionProblemSchema), [
            400,
            404,
            413,
            415,
            422,
            502,
            504,
            ...AUTH_ERRORS,
          ]),
        },
      },
    },
    async (request, reply) =>
      sendGuarded(request, reply, (caller, options) =>
        services.responses.respond(caller, request.params.application_id, request.body, options),
      ),
  )
}
