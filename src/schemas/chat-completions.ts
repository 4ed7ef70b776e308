import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { ApplicationIdParam, Nullable, ProblemSchema } from './common.js'
import { MessageSchema } from './messages.js'

/**
 * An OpenAI Chat Completions request (docs/chat-completions.md), answered like OpenAI. Every field of
 * OpenAI's request is listed, so that a field outside that API (a typo) is a 422 like anywhere
 * else; the shapes inside them are the upstream's to check, so they are permissive here and are
 * passed on exactly as sent. Only what Warden itself reads is checked closely: the messages it
 * evaluates, `n`, `stream` and `stream_options.include_usage`, and the application parameters a
 * request may override.
 */

/** A schema that also accepts null: `type: [T, "null"]`, or for a union one more branch. */
const orNull = <T extends TSchema>(schema: T, description: string, example: unknown) =>
  'anyOf' in schema
    ? Type.Union([...(schema.anyOf as TSchema[]), Type.Null()], { description, examples: [example] })
    : Nullable(schema, { description, examples: [example] })

const optionalNullable = <T extends TSchema>(schema: T, description: string, example: unknown) =>
  Type.Optional(orNull(schema, description, example) as ReturnType<typeof Nullable<T>>)

/** A message in OpenAI's shape, the same schema as every route's (src/schemas/messages.ts). */
export { CHAT_ROLES } from './messages.js'
export const ChatMessageSchema = MessageSchema
export type { ChatMessage } from './messages.js'

const passed = 'Passed to the upstream as sent.'

export const ChatCompletionRequestSchema = Type.Object(
  {
    messages: Type.Array(ChatMessageSchema, {
      minItems: 1,
      description:
        'The conversation. It is evaluated against the application’s policies before the upstream is called; the application’s system prompt comes first when the conversation has no system or developer message.',
      examples: [[{ role: 'user', content: 'Where is my order 1042?' }]],
    }),
    model: optionalNullable(
      Type.String(),
      'The model; absent, null or "" means the application’s `model`.',
      'gpt-4o-mini',
    ),
    temperature: optionalNullable(
      Type.Number(),
      `Absent or null means the application’s parameters.temperature, if set. ${passed}`,
      0.2,
    ),
    top_p: optionalNullable(
      Type.Number(),
      `Absent or null means the application’s parameters.top_p, if set. ${passed}`,
      1,
    ),
    max_tokens: optionalNullable(
      Type.Integer(),
      `Absent or null means the application’s parameters.max_tokens, if set and max_completion_tokens is not. ${passed}`,
      512,
    ),
    top_k: optionalNullable(
      Type.Integer({ minimum: 1, maximum: 10_000 }),
      'Not part of OpenAI’s API: sampling from the k likeliest tokens, for upstreams that take it (vLLM, llama.cpp). Absent or null means the application’s parameters.top_k; sent only when one of the two sets it.',
      40,
    ),
    n: optionalNullable(
      Type.Integer({ minimum: 1, maximum: 128 }),
      `How many choices to generate, 1 to 128; each is evaluated on its own. ${passed}`,
      1,
    ),
    stream: optionalNullable(
      Type.Boolean(),
      'true: the answer is a stream of server-sent events in OpenAI’s chunk format, its text released as the reply grows once no enforced output rule can still flag it, and each tool call sent whole once the whole reply passed (X-Warden-Stream: buffered: everything sent once the whole reply passed); the last chunk carries `warden`.',
      false,
    ),
    stream_options: optionalNullable(
      Type.Object(
        {
          include_usage: Type.Optional(
            Type.Boolean({
              description: 'true: a last chunk carries the token usage, as OpenAI sends it.',
              examples: [true],
            }),
          ),
        },
        { additionalProperties: true },
      ),
      `Options of a streamed answer. ${passed}`,
      { include_usage: true },
    ),
    max_completion_tokens: optionalNullable(Type.Integer(), passed, 512),
    frequency_penalty: optionalNullable(Type.Number(), passed, 0),
    presence_penalty: optionalNullable(Type.Number(), passed, 0),
    seed: optionalNullable(Type.Integer(), passed, 42),
    stop: optionalNullable(
      Type.Union([Type.String(), Type.Array(Type.String())]),
      `A stop sequence or a list of them. ${passed}`,
      ['\n\n'],
    ),
    logit_bias: optionalNullable(
      Type.Object({}, { additionalProperties: true }),
      `Token ids mapped to a bias. ${passed}`,
      { '50256': -100 },
    ),
    logprobs: optionalNullable(Type.Boolean(), passed, false),
    top_logprobs: optionalNullable(Type.Integer(), passed, 2),
    user: optionalNullable(Type.String(), `An end-user identifier. ${passed}`, 'user-1234'),
    safety_identifier: optionalNullable(Type.String(), passed, 'user-1234'),
    tools: optionalNullable(
      Type.Array(Type.Object({}, { additionalProperties: true })),
      `The tools the model may call. ${passed}`,
      [{ type: 'function', function: { name: 'find_order', parameters: { type: 'object' } } }],
    ),
    tool_choice: optionalNullable(
      Type.Union([Type.String(), Type.Object({}, { additionalProperties: true })]),
      passed,
      'auto',
    ),
    parallel_tool_calls: optionalNullable(Type.Boolean(), passed, true),
    functions: optionalNullable(
      Type.Array(Type.Object({}, { additionalProperties: true })),
      `OpenAI’s deprecated form of tools. ${passed}`,
      [{ name: 'find_order', parameters: { type: 'object' } }],
    ),
    function_call: optionalNullable(
      Type.Union([Type.String(), Type.Object({}, { additionalProperties: true })]),
      `OpenAI’s deprecated form of tool_choice. ${passed}`,
      'auto',
    ),
    response_format: optionalNullable(Type.Object({}, { additionalProperties: true }), passed, {
      type: 'json_object',
    }),
    metadata: optionalNullable(Type.Object({}, { additionalProperties: true }), passed, { ticket: 'T-1042' }),
    store: optionalNullable(Type.Boolean(), passed, false),
    reasoning_effort: optionalNullable(Type.String(), passed, 'low'),
    verbosity: optionalNullable(Type.String(), passed, 'medium'),
    modalities: optionalNullable(Type.Array(Type.String()), passed, ['text']),
    audio: optionalNullable(Type.Object({}, { additionalProperties: true }), passed, {
      voice: 'alloy',
      format: 'mp3',
    }),
    prediction: optionalNullable(Type.Object({}, { additionalProperties: true }), passed, {
      type: 'content',
      content: 'Your order 1042 ships today.',
    }),
    service_tier: optionalNullable(Type.String(), passed, 'auto'),
    prompt_cache_key: optionalNullable(Type.String(), passed, 'support-bot'),
    prompt_cache_retention: optionalNullable(Type.String(), passed, '24h'),
    prompt_cache_options: optionalNullable(Type.Object({}, { additionalProperties: true }), passed, {}),
    moderation: optionalNullable(Type.Object({}, { additionalProperties: true }), passed, {}),
    web_search_options: optionalNullable(Type.Object({}, { additionalProperties: true }), passed, {
      search_context_size: 'medium',
    }),
  },
  { additionalProperties: false, title: 'ChatCompletionRequest' },
)
export type ChatCompletionRequest = Static<typeof ChatCompletionRequestSchema>

export const ChatCompletionParamsSchema = Type.Object({ application_id: ApplicationIdParam })

export const FailedRuleSchema = Type.Object(
  {
    evaluation: Type.Unsafe<'input' | 'output'>({
      type: 'string',
      enum: ['input', 'output'],
      description:
        'Which evaluation failed: the conversation before the call (input), or a choice’s reply (output).',
      examples: ['output'],
    }),
    evaluation_id: Type.String({
      description: 'That evaluation’s id in the evaluation log, where the findings and their locations are.',
      examples: ['0193c1c0-5e20-7b21-8f03-7d2c5e9a1b44'],
    }),
    choice: Nullable(Type.Integer(), {
      description: 'The choice whose reply failed; null for the input.',
      examples: [0],
    }),
    policy_id: Type.String({ description: 'The failing enforced policy.', examples: ['no-pii'] }),
    policy_revision: Nullable(Type.Integer(), {
      description: 'The policy’s revision evaluated.',
      examples: [3],
    }),
    rule_index: Type.Integer({ description: 'The rule’s position in the policy.', examples: [0] }),
    rule_type: Type.String({ description: 'The rule’s type.', examples: ['pii'] }),
    status: Type.Unsafe<'pass' | 'fail' | 'skipped' | 'error'>({
      type: 'string',
      enum: ['pass', 'fail', 'skipped', 'error'],
      description:
        'The rule’s status: fail, error (counted as a failure by a fail_closed policy), or pass for a rule expected to fail.',
      examples: ['fail'],
    }),
    categories: Type.Array(Type.String(), {
      description:
        'What the rule found, by kind (credit_card, email, keyword, regex, length, toxicity, prompt_injection, …), each once; empty when it reported no finding. Never the matched text.',
      examples: [['credit_card']],
    }),
  },
  {
    additionalProperties: false,
    description: 'An enforced rule that failed, named without the text it matched.',
    examples: [
      {
        evaluation: 'output',
        evaluation_id: '0193c1c0-5e20-7b21-8f03-7d2c5e9a1b44',
        choice: 0,
        policy_id: 'no-pii',
        policy_revision: 3,
        rule_index: 0,
        rule_type: 'pii',
        status: 'fail',
        categories: ['credit_card'],
      },
    ],
  },
)
export type FailedRuleOutcome = Static<typeof FailedRuleSchema>

export const WardenOutcomeSchema = Type.Object(
  {
    action: Type.Unsafe<'allow' | 'mask' | 'override' | 'block'>({
      type: 'string',
      enum: ['allow', 'mask', 'override', 'block'],
      description:
        'allow: the reply is the model’s; mask: values were masked (in the conversation sent upstream, or in the reply) and the reply went on (docs/masking.md); override or block: the input or a choice failed a policy and was replaced (the first such, input first, then choices in order).',
      examples: ['allow'],
    }),
    input_evaluation_id: Type.String({
      description:
        'The evaluation of the conversation before the upstream was called (the evaluation log’s id).',
      examples: ['0193c1c0-5e1f-7a3c-9a51-2c1f4d3e8a90'],
    }),
    output_evaluation_id: Nullable(Type.String(), {
      description:
        'The evaluation of the first choice’s reply; null when the input stopped the call or the choice has neither text nor tool calls.',
      examples: ['0193c1c0-5e20-7b21-8f03-7d2c5e9a1b44'],
    }),
    output_evaluation_ids: Type.Array(Nullable(Type.String()), {
      description:
        'The evaluation of every choice’s reply, in choice order (null for a choice with neither text nor tool calls); empty when the input stopped the call.',
      examples: [['0193c1c0-5e20-7b21-8f03-7d2c5e9a1b44']],
    }),
    masked: Type.Optional(
      Type.Record(Type.String(), Type.Integer({ minimum: 1 }), {
        description:
          'With action mask: how many values of each kind were masked (in the conversation sent upstream and in the reply), never the values.',
        examples: [{ email: 1, credit_card: 1 }],
      }),
    ),
    failed: Type.Array(FailedRuleSchema, {
      description:
        'Why the answer was blocked or overridden: each enforced rule that failed, in the input’s evaluation, then in each choice’s in choice order; empty for allow. Ids, type and categories only, never the matched text: an application holding only an evaluations:write key can tell its user why.',
      examples: [[]],
    }),
  },
  {
    additionalProperties: false,
    description: 'What Warden decided, with the ids of the evaluations in the evaluation log.',
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
)
export type WardenOutcome = Static<typeof WardenOutcomeSchema>

export const ChatCompletionSchema = Type.Object(
  {
    id: Type.String({
      description: 'The completion’s id, as the upstream gave it.',
      examples: ['chatcmpl-abc123'],
    }),
    object: Type.String({ description: 'Always chat.completion.', examples: ['chat.completion'] }),
    created: Type.Integer({ description: 'Unix seconds.', examples: [1795316060] }),
    model: Type.String({ description: 'The model that answered.', examples: ['gpt-4o-mini'] }),
    choices: Type.Array(Type.Object({}, { additionalProperties: true }), {
      description:
        'The choices, as the upstream sent them; a choice that failed an output policy, or every choice when the input did, holds the override (an empty content for block) with finish_reason content_filter.',
      examples: [
        [
          {
            index: 0,
            message: { role: 'assistant', content: 'Sorry, I cannot share that.', refusal: null },
            logprobs: null,
            finish_reason: 'content_filter',
          },
        ],
      ],
    }),
    usage: Type.Optional(
      Nullable(Type.Object({}, { additionalProperties: true }), {
        description: 'Token usage as the upstream counted it; zeros when the upstream was not called.',
        examples: [{ prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 }],
      }),
    ),
    warden: WardenOutcomeSchema,
  },
  {
    additionalProperties: true,
    title: 'ChatCompletion',
    description:
      'An OpenAI chat completion with Warden’s outcome; every other field as the upstream sent it.',
  },
)

/**
 * OpenAI's error member, which OpenAI's SDKs read to show why a call failed: the problem's detail,
 * code and first pointer, under the names OpenAI gives them.
 */
export const OpenAIErrorSchema = Type.Object(
  {
    message: Type.String({
      description: 'The problem’s `detail`; the OpenAI SDKs show it as the error’s message.',
      examples: ['Provider "azure-eu" has no configured upstream'],
    }),
    type: Type.String({
      description: 'The problem’s `code`.',
      examples: ['validation_error'],
    }),
    param: Nullable(Type.String(), {
      description: 'The pointer of the first of `errors`; null when the problem has none.',
      examples: ['#/path/application_id'],
    }),
    code: Type.String({
      description: 'The problem’s `code`.',
      examples: ['validation_error'],
    }),
  },
  {
    additionalProperties: false,
    description: 'The problem in OpenAI’s error format, for OpenAI’s SDKs.',
    examples: [
      {
        message: 'Provider "azure-eu" has no configured upstream',
        type: 'validation_error',
        param: '#/path/application_id',
        code: 'validation_error',
      },
    ],
  },
)
export type OpenAIError = Static<typeof OpenAIErrorSchema>

// A tests_failed problem never comes from this route: its `failures` member is left out.
const { failures: _failures, ...problemMembers } = ProblemSchema.properties

export const ChatCompletionProblemSchema = Type.Object(
  { ...problemMembers, error: OpenAIErrorSchema },
  {
    $id: 'ChatCompletionProblem',
    title: 'ChatCompletionProblem',
    description:
      'An RFC 9457 problem details object, sent as application/problem+json, that also carries OpenAI’s `error` member.',
    additionalProperties: false,
  },
)
