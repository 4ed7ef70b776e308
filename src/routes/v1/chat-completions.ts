import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ProviderDirectory } from '../../config.js'
import { limitNesting, MAX_NESTING_DEPTH } from '../../http/nesting.js'
import { AUTH_ERRORS, problemResponses } from '../../http/openapi.js'
import { setAsideExtraFields } from '../../proxy/extra-fields.js'
import {
  ChatCompletionParamsSchema,
  ChatCompletionProblemSchema,
  ChatCompletionRequestSchema,
  ChatCompletionSchema,
} from '../../schemas/chat-completions.js'
import type { Services } from '../../services/index.js'
import { sendGuarded } from './guarded-answer.js'

const tags = ['chat completions']

export const chatCompletionsRoutes: FastifyPluginAsyncTypebox<{
  services: Services
  /** The request body's limit (CHAT_COMPLETIONS_BODY_LIMIT_BYTES), high enough for images, audio and files. */
  bodyLimit: number
  /** The providers' extra fields (PROVIDER_<NAME>_EXTRA_FIELDS), set aside before the schema reads the body. */
  providers: Pick<ProviderDirectory, 'extraFields'>
}> = async (app, { services, bodyLimit, providers }) => {
  const known = new Set(Object.keys(ChatCompletionRequestSchema.properties))
  app.post(
    '/v1/applications/:application_id/chat/completions',
    {
      // Every problem also carries OpenAI's `error` member, which OpenAI's SDKs show.
      config: { scope: 'evaluations:write', openaiErrors: true },
      bodyLimit,
      // Fields passed on as sent are not checked inside by the schema: their depth is capped here.
      preValidation: [limitNesting, setAsideExtraFields(providers, known)],
      schema: {
        operationId: 'createChatCompletion',
        summary: 'A chat completion from the application’s model, guarded by its policies',
        description: `Takes an OpenAI Chat Completions request and answers like OpenAI, so the official OpenAI SDKs work with \`baseURL = {warden}/v1/applications/{application_id}\`. The upstream is the application’s provider (PROVIDER_<NAME>_BASE_URL and PROVIDER_<NAME>_API_KEY); its model and parameters are defaults the request may override, and its system prompt comes first when the conversation has none. The conversation is evaluated first: when its action is mask, the upstream gets the masked conversation and the reply gets the masked values back (docs/masking.md); when it is override or block, the upstream is not called and every choice holds the policy’s override_response (empty for block) with finish_reason content_filter. Then each choice of the reply is evaluated with the conversation and replaced the same way when it fails. \`stream: true\` is answered with server-sent events released as the reply grows: text is sent once no enforced output rule can still flag it (pii, keywords, regex and length rules hold back only a finding that may be in progress; toxicity, prompt_injection and custom rules score windows of at least STREAM_WINDOW_CHARS code points, extended to the next sentence end, each with the window before it as context, and hold text back until its window passed); a violation mid-stream (a window that fails included, or a judge error under fail_closed) aborts the upstream call and ends the stream with a chunk holding the override_response (no content for block) and finish_reason content_filter, then [DONE]; text sent before it stays sent. The header \`X-Warden-Stream: buffered\`, an enforced output rule that needs the whole reply (factuality, relevance, a rule expected to fail) and n > 1 make the stream buffered: nothing is sent before the whole reply passed. \`warden\` is on the last chunk before [DONE]. A released stream's first chunk and each pause wait at most PROVIDER_TIMEOUT_MS; a stream already started that fails or goes silent ends with an \`error\` event and no [DONE]. The answer carries \`warden\` (the action and the evaluation ids) and, except on a stream released as it grows (whose headers leave before the decision), the X-Warden-Action header. A body nested deeper than ${MAX_NESTING_DEPTH} levels of arrays and objects (the body itself the first) is a 422 pointing at the first value too deep. Top-level fields the provider takes beyond OpenAI’s API (PROVIDER_<NAME>_EXTRA_FIELDS, e.g. vLLM’s min_p) are passed on as sent; any other unknown field is a 422. Every error is problem+json that also carries OpenAI’s \`error\` member (\`message\` the detail, \`type\` and \`code\` the code, \`param\` the first pointer or null), so that OpenAI’s SDKs show why a call failed. Needs evaluations:write.`,
        tags,
        params: ChatCompletionParamsSchema,
        body: ChatCompletionRequestSchema,
        response: {
          200: {
            description:
              'The completion (application/json), or with `stream: true` its chunks as server-sent events (text/event-stream: `data: {chunk}` events, Warden’s outcome on the last, then `data: [DONE]`).',
            headers: {
              'X-Warden-Action': {
                type: 'string',
                enum: ['allow', 'mask', 'override', 'block'],
                description:
                  'What Warden did: allow; mask when mask rules masked values (in the conversation sent upstream, or in the reply) and the reply went on; or override / block when the input or a choice failed. Absent on a stream released as it grows, whose headers leave before the decision is made: its last chunk’s `warden.action` says how it ended.',
                examples: ['allow'],
              },
            },
            content: {
              'application/json': { schema: ChatCompletionSchema },
              'text/event-stream': {
                schema: {
                  type: 'string',
                  description:
                    'OpenAI’s chat.completion.chunk objects as `data:` events, ending with `data: [DONE]`.',
                  examples: [
                    'data: {"id":"chatcmpl-abc123","object":"chat.completion.chunk",…}\n\ndata: [DONE]\n\n',
                  ],
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
        services.chatCompletions.complete(caller, request.params.application_id, request.body, options),
      ),
  )
}
