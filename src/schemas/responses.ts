import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { ApplicationIdParam, Nullable } from './common.js'

/**
 * An OpenAI Responses request (docs/agents.md, CONTRACT section 14), answered like OpenAI. Every
 * top-level field of OpenAI's request is listed, so that a field outside that API (a typo) is a
 * 422 like anywhere else; the shapes inside them are the upstream's to check and are passed on
 * exactly as sent. Warden reads `input`, `instructions`, `stream` and the application parameters
 * a request may override; the items of `input` are read by src/proxy/responses.ts.
 */

const passed = 'Passed to the upstream as sent.'

const optional = <T extends TSchema>(schema: T, description: string, example: unknown) =>
  Type.Optional(Nullable(schema, { description, examples: [example] }))

const anything = (description: string, example: unknown) =>
  Type.Optional(Type.Unknown({ description, examples: [example] }))

export const ResponsesRequestSchema = Type.Object(
  {
    input: Type.Optional(
      Type.Union(
        [Type.String(), Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 10_000 })],
        {
          description:
            'A user message as a string, or a list of input items (messages, function_call, function_call_output, …). Evaluated against the application’s policies before the upstream is called: system and developer messages as `system`, user messages as `user` (the last as `input`), assistant messages and function_call arguments as `assistant`, function_call_output items as `context`. Parts that are not text (input_image, input_file, input_audio) and items of other types are passed on and named in `warden.not_read`, not read.',
          examples: ['Where is my order 1042?'],
        },
      ),
    ),
    model: optional(
      Type.String(),
      'The model; absent, null or "" means the application’s `model`.',
      'gpt-4o-mini',
    ),
    instructions: optional(
      Type.String(),
      'A system message, read as `system`; absent or null means the application’s parameters.system_prompt, if set.',
      'You are a support agent.',
    ),
    stream: optional(
      Type.Boolean(),
      'true: OpenAI’s Responses server-sent events, text released as the reply grows once no enforced output rule can still flag it, each function call sent only once the whole reply passed.',
      false,
    ),
    previous_response_id: optional(
      Type.String(),
      `The earlier turns live at the provider and are not evaluated again: Warden evaluates the items sent with this request. ${passed}`,
      'resp_abc123',
    ),
    temperature: optional(
      Type.Number(),
      `Absent or null means the application’s parameters.temperature. ${passed}`,
      0.2,
    ),
    top_p: optional(Type.Number(), `Absent or null means the application’s parameters.top_p. ${passed}`, 1),
    max_output_tokens: optional(
      Type.Integer(),
      `Absent or null means the application’s parameters.max_tokens. ${passed}`,
      512,
    ),
    top_k: optional(
      Type.Integer({ minimum: 1, maximum: 10_000 }),
      'Not part of OpenAI’s API, for upstreams that take it: absent or null means the application’s parameters.top_k; sent only when one of the two sets it.',
      40,
    ),
    tools: anything(passed, [{ type: 'function', name: 'lookup_order', parameters: { type: 'object' } }]),
    tool_choice: anything(passed, 'auto'),
    parallel_tool_calls: anything(passed, true),
    max_tool_calls: anything(passed, 4),
    store: anything(passed, false),
    metadata: anything(passed, { ticket: '1042' }),
    include: anything(passed, ['reasoning.encrypted_content']),
    reasoning: anything(passed, { effort: 'low' }),
    text: anything(passed, { format: { type: 'text' } }),
    truncation: anything(passed, 'auto'),
    user: anything(passed, 'user-1042'),
    background: anything(passed, false),
    conversation: anything(passed, 'conv_abc123'),
    prompt: anything(passed, { id: 'pmpt_abc123' }),
    prompt_cache_key: anything(passed, 'support'),
    prompt_cache_retention: anything(passed, 'in-memory'),
    safety_identifier: anything(passed, 'user-1042'),
    service_tier: anything(passed, 'auto'),
    stream_options: anything(passed, { include_obfuscation: false }),
    top_logprobs: anything(passed, 0),
  },
  { $id: 'ResponsesRequest', title: 'ResponsesRequest', additionalProperties: false },
)
export type ResponsesRequest = Static<typeof ResponsesRequestSchema>

export const ResponsesParamsSchema = Type.Object({ application_id: ApplicationIdParam })

/** A response, as OpenAI's Responses API answers it, with Warden's outcome. */
export const ResponseSchema = Type.Object(
  {
    id: Type.String({
      description: 'The response’s id, as the upstream gave it.',
      examples: ['resp_abc123'],
    }),
    object: Type.String({ description: 'Always response.', examples: ['response'] }),
    created_at: Type.Number({ description: 'Unix seconds.', examples: [1795316060] }),
    status: Type.String({
      description:
        'As the upstream said; incomplete, with incomplete_details.reason content_filter, when Warden replaced the output.',
      examples: ['completed'],
    }),
    model: Type.String({ description: 'The model that answered.', examples: ['gpt-4o-mini'] }),
    output: Type.Array(Type.Object({}, { additionalProperties: true }), {
      description:
        'The output items as the upstream sent them (masked values put back); one assistant message holding the override (empty for block) when the input or the output failed a policy.',
      examples: [
        [
          {
            type: 'message',
            id: 'msg_abc123',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: 'Order 1042 ships tomorrow.', annotations: [] }],
          },
        ],
      ],
    }),
    warden: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'Warden’s outcome, as on chat completions (action, evaluation ids, failed rules, masked counts), and `not_read`: the input parts and items no rule read ({item, part, type}).',
        examples: [
          {
            action: 'allow',
            input_evaluation_id: '0193c1c0-5e1f-7a3c-9a51-2c1f4d3e8a90',
            output_evaluation_id: '0193c1c0-5e20-7b21-8f03-7d2c5e9a1b44',
            output_evaluation_ids: ['0193c1c0-5e20-7b21-8f03-7d2c5e9a1b44'],
            failed: [],
          },
        ],
      },
    ),
  },
  { $id: 'Response', title: 'Response', additionalProperties: true },
)
