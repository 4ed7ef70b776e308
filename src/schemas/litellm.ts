import { type Static, Type } from '@sinclair/typebox'
import { enumOf, Nullable } from './common.js'
import { ToolCallSchema } from './messages.js'

/**
 * LiteLLM's Generic Guardrail API (docs/litellm.md), as LiteLLM documents it in
 * docs/my-website/docs/adding_provider/generic_guardrail_api.md and sends it from
 * litellm/proxy/guardrails/guardrail_hooks/generic_guardrail_api/generic_guardrail_api.py
 * (request and response models: litellm/types/proxy/guardrails/guardrail_hooks/generic_guardrail_api.py).
 * LiteLLM adds fields to this request from one release to the next, so fields outside those
 * listed are accepted and not read (the general rule against unknown fields does not apply,
 * as on the chat-completions route): a guardrail that refused them would fail every call.
 */

const AnyObject = (description: string, example: unknown) =>
  Type.Object({}, { additionalProperties: true, description, examples: [example] })

const optionalNullable = <T extends ReturnType<typeof Type.Array> | ReturnType<typeof Type.String>>(
  schema: T,
  description: string,
  example: unknown,
) => Type.Optional(Nullable(schema, { description, examples: [example] }))

export const GuardrailRequestSchema = Type.Object(
  {
    input_type: enumOf(['request', 'response'] as const, {
      description:
        'request: the call’s input, before the model is called (LiteLLM’s pre_call and during_call); response: the model’s reply (post_call).',
      examples: ['request'],
    }),
    texts: optionalNullable(
      Type.Array(Type.String()),
      'The texts LiteLLM extracted: the request’s messages, or the reply’s. Read as user turns for a request without structured_messages, as the assistant’s reply for a response.',
      ['What is my card 4111 1111 1111 1111 for?'],
    ),
    structured_messages: optionalNullable(
      Type.Array(AnyObject('A message in OpenAI’s shape.', { role: 'user', content: 'Hello' })),
      'The request’s messages in OpenAI’s shape, when LiteLLM sends them: read as the conversation (roles, tool calls and tool results as in an evaluation).',
      [{ role: 'user', content: 'Hello' }],
    ),
    tool_calls: optionalNullable(
      Type.Array(ToolCallSchema),
      'The tool calls of the reply (input_type response): their arguments are read as output.',
      [{ id: 'call_1', type: 'function', function: { name: 'refund', arguments: '{"order": 1042}' } }],
    ),
    images: optionalNullable(Type.Array(Type.String()), 'Images of the request or reply: not read.', [
      'iVBORw0KGgo=',
    ]),
    tools: optionalNullable(
      Type.Array(AnyObject('A tool definition (OpenAI’s ChatCompletionToolParam).', { type: 'function' })),
      'The tools the request offers: not read.',
      [{ type: 'function', function: { name: 'get_weather' } }],
    ),
    request_data: Type.Optional(
      Nullable(
        AnyObject('Who called LiteLLM: the virtual key’s hash, alias, user, team, organisation.', {}),
        {
          description: 'Who called LiteLLM (user_api_key_*): not read.',
          examples: [{ user_api_key_alias: 'support-team' }],
        },
      ),
    ),
    litellm_call_id: optionalNullable(Type.String(), 'LiteLLM’s id of the call: not read.', 'a1b2c3'),
    litellm_trace_id: optionalNullable(Type.String(), 'LiteLLM’s trace id: not read.', 't1'),
    additional_provider_specific_params: Type.Optional(
      Nullable(AnyObject('The guardrail’s additional_provider_specific_params from LiteLLM’s config.', {}), {
        description: 'additional_provider_specific_params from LiteLLM’s config: not read.',
        examples: [{}],
      }),
    ),
  },
  {
    additionalProperties: true,
    title: 'LiteLLMGuardrailRequest',
    description: 'What LiteLLM’s Generic Guardrail API sends.',
  },
)
export type GuardrailRequest = Static<typeof GuardrailRequestSchema>

export const GUARDRAIL_ACTIONS = ['BLOCKED', 'NONE', 'GUARDRAIL_INTERVENED'] as const

export const GuardrailResponseSchema = Type.Object(
  {
    action: enumOf(GUARDRAIL_ACTIONS, {
      description:
        'NONE: the call goes on unchanged (Warden’s allow); BLOCKED: LiteLLM refuses the call with blocked_reason (Warden’s block, and an override of a request); GUARDRAIL_INTERVENED: the texts are replaced by `texts` (Warden’s override of a response; Warden’s mask, of a request or a response).',
      examples: ['BLOCKED'],
    }),
    blocked_reason: Type.Optional(
      Type.String({
        description:
          'With BLOCKED: the override_response when the failing policy has one, else which policies and rules failed (ids, rule index and type, finding kinds; never the matched text), and the evaluation id.',
        examples: [
          'Blocked by Warden: policy no-pii rule 0 (pii: credit_card); evaluation 0193c1c0-7b9e-7cc4-9d7c-3f1f2b8a9e10',
        ],
      }),
    ),
    texts: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'With GUARDRAIL_INTERVENED: one text for each text received. An override: the first the override_response, the others empty. A mask: each text received with every masked value replaced, by its placeholder ([EMAIL_1]) in a request, by [KIND] in a response.',
        examples: [['Sorry, I cannot share that.']],
      }),
    ),
  },
  { additionalProperties: false, title: 'LiteLLMGuardrailResponse' },
)
export type GuardrailResponse = Static<typeof GuardrailResponseSchema>
