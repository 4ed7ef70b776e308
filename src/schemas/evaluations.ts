import { type Static, Type } from '@sinclair/typebox'
import {
  ApplicationIdParam,
  enumOf,
  ListQuerySchema,
  Nullable,
  PageSchema,
  ResourceIdSchema,
} from './common.js'
import { type ConversationMessage, MessageAnswerSchema, MessageSchema } from './messages.js'
import { MODES, ON_ERROR, PolicyCreateSchema, RULE_TYPES, VERDICTS } from './policies.js'
import { TOXICITY_CATEGORIES } from './rule-vocabulary.js'

/** The evaluation call (docs/evaluation.md). */

export const MESSAGE_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const

/** The example the OpenAPI document shows of a finding, a rule's result and a policy's result. */
const FINDING_EXAMPLE = {
  kind: 'credit_card',
  source: 'messages',
  index: 1,
  start: 11,
  end: 30,
  text: '4111 1111 1111 1111',
}
const RULE_RESULT_EXAMPLE = {
  index: 0,
  type: 'pii',
  expected: 'pass',
  status: 'fail',
  satisfied: false,
  score: null,
  threshold: null,
  method: 'detector',
  reason: null,
  findings: [FINDING_EXAMPLE],
}
const POLICY_RESULT_EXAMPLE = {
  id: 'no-pii',
  revision: 3,
  mode: 'enforce',
  on_error: 'fail_closed',
  draft: false,
  verdict: 'fail',
  rules: [RULE_RESULT_EXAMPLE],
}

/** A message in OpenAI's shape, the same for every route (src/schemas/messages.ts). */
export { MessageSchema } from './messages.js'

export const ContextSchema = Nullable(
  Type.Array(Type.String(), {
    maxItems: 100,
    description: 'Documents the output should be grounded in (retrieved passages), 0 to 100.',
  }),
  {
    description:
      'Documents the output should be grounded in (retrieved passages), 0 to 100; read by the context target and by factuality.',
    examples: [['Refunds are possible within 30 days of delivery.']],
  },
)

const PolicySelectorSchema = Type.Union(
  [
    ResourceIdSchema({ description: 'A policy id: its current revision.', examples: ['no-pii'] }),
    Type.Object(
      {
        id: ResourceIdSchema({ description: 'A policy id.', examples: ['no-pii'] }),
        revision: Nullable(Type.Integer({ minimum: 1 }), {
          description: 'The revision to evaluate, current or past; null means the current one.',
          examples: [2],
        }),
      },
      { additionalProperties: false },
    ),
  ],
  { description: 'A policy id, or {"id", "revision"} to pin a revision.' },
)

/** The most draft policies one evaluation sends. */
export const MAX_DRAFT_POLICIES = 20

/**
 * What an evaluation call says asked: an application (`api`) or a person trying policies out in
 * the console's playground (`playground`).
 */
export const REQUEST_SOURCES = ['api', 'playground'] as const

/** What asked for a logged evaluation: an evaluation call's source, or a guarded chat completion's check. */
export const EVALUATION_SOURCES = [
  ...REQUEST_SOURCES,
  'chat_input',
  'chat_output',
  'responses_input',
  'responses_output',
] as const
export type EvaluationSource = (typeof EVALUATION_SOURCES)[number]

export const EvaluationRequestSchema = Type.Object(
  {
    messages: Type.Array(MessageSchema, {
      minItems: 1,
      maxItems: 1000,
      description:
        'The conversation, 1 to 1,000 messages. It ends with a user turn before the model is called, and with the assistant reply after.',
      examples: [
        [
          { role: 'system', content: 'You are a helpful support agent.' },
          { role: 'user', content: 'My card is 4111 1111 1111 1111, can I get a refund?' },
        ],
      ],
    }),
    context: Type.Optional(ContextSchema),
    policies: Type.Optional(
      Nullable(Type.Array(PolicySelectorSchema, { maxItems: 100 }), {
        description:
          'Which policies to evaluate, in this order; null or absent means every policy of the application, in creation order. An id or revision that does not exist is a 422 pointing at it.',
        examples: [['no-pii', { id: 'tone', revision: 2 }]],
      }),
    ),
    draft_policies: Type.Optional(
      Nullable(Type.Array(PolicyCreateSchema, { maxItems: MAX_DRAFT_POLICIES }), {
        description:
          'Up to 20 policy bodies, validated exactly like a create and evaluated after the stored ones as if they existed; nothing is stored. For trying a change before making it.',
        examples: [
          [
            {
              id: 'stricter',
              rules: [{ type: 'keywords', flagged: ['refund guarantee'] }],
              target: ['output'],
            },
          ],
        ],
      }),
    ),
    redact: Type.Optional(
      Nullable(Type.Boolean(), {
        description:
          'true: the answer also carries `redacted`, the conversation with every finding replaced by [KIND].',
        examples: [true],
      }),
    ),
    source: Type.Optional(
      Nullable(enumOf(REQUEST_SOURCES), {
        description:
          'What is asking, as the evaluation log records it: api (null or absent: the default) for an application’s own checks, playground for a person trying policies out (the console’s playground sends it). A playground evaluation is evaluated and logged like any other, is listed with `source=playground`, and is not counted in the evaluation metrics.',
        examples: ['api'],
      }),
    ),
  },
  { additionalProperties: false, title: 'EvaluationRequest' },
)
/** The body as sent: messages in OpenAI's shape. */
export type EvaluationRequestBody = Static<typeof EvaluationRequestSchema>
/** The request as the evaluation service reads it: messages as `readableMessages` reads them. */
export type EvaluationRequest = Omit<EvaluationRequestBody, 'messages'> & { messages: ConversationMessage[] }

export const EvaluationParamsSchema = Type.Object({ application_id: ApplicationIdParam })
export type EvaluationParams = Static<typeof EvaluationParamsSchema>

const FindingSchema = Type.Object(
  {
    kind: Type.String({
      description:
        'What was found: a PII kind (email, phone, credit_card, iban, ssn, ip_address, api_key, crypto_wallet, mac_address, us_itin, us_bank_routing, uk_nino, uk_nhs, es_nif, es_nie, it_fiscal_code, pl_pesel, in_aadhaar, in_pan, sg_nric, au_tfn, au_abn, au_medicare, date_of_birth), keyword, regex, length, toxicity, prompt_injection, or tool (a call to a tool a tools rule does not list; its text is the name called, its path #name).',
      examples: ['credit_card'],
    }),
    source: enumOf(['messages', 'context'] as const, {
      description: 'Where: a message (messages[index]) or a context document (context[index]).',
      examples: ['messages'],
    }),
    index: Type.Integer({ description: 'The index of the message or document.', examples: [1] }),
    start: Type.Integer({
      description: 'Offset of the first character, in Unicode code points (as Python slices count).',
      examples: [11],
    }),
    end: Type.Integer({
      description:
        'Offset after the last character, in code points; for a length finding, the text’s length.',
      examples: [30],
    }),
    text: Nullable(Type.String(), {
      description:
        'The matched text, as it stands in the text sent (in a tool call’s arguments, as written there: `\\u0034111 1111 1111 1111`); null for a length finding. In the evaluation log, as its `content` says: the [KIND] label for a pii, keywords or regex finding when redacted, null when none.',
      examples: ['4111 1111 1111 1111'],
    }),
    tool_call: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'Only for a finding in a tool call: the call’s position in messages[index].tool_calls; `start` and `end` then count in its function.arguments (or custom.input) as sent, or, with `path` `#name`, in its function.name (or custom.name). Arguments that are JSON are read as their decoded values (docs/agents.md).',
        examples: [0],
      }),
    ),
    path: Type.Optional(
      Type.String({
        description:
          'With tool_call: the JSON Pointer, inside the parsed arguments, of the value (or member name) the finding starts in ("" for the whole arguments, or arguments that are not JSON); `#name` for a finding in the name of the function called.',
        examples: ['/card'],
      }),
    ),
  },
  { additionalProperties: false },
)

/** What a message carried that no rule read: a non-text part, or a field such as audio. */
export const NotReadSchema = Type.Object(
  {
    index: Type.Integer({ description: 'The message’s index.', examples: [1] }),
    part: Nullable(Type.Integer(), {
      description: 'The part’s index in the message’s content; null for a field of the message.',
      examples: [1],
    }),
    type: Type.String({
      description:
        'The part’s type (image_url, input_audio, file, …), or the field’s name (audio, function_call).',
      examples: ['image_url'],
    }),
  },
  { additionalProperties: false },
)

const GuardResultSchema = Type.Object(
  {
    verdict: Nullable(Type.String(), {
      description:
        'The answer as the guard wrote it (`unsafe\\nS1,S10`, `Safety: Unsafe\\nCategories: Violent`, `MALICIOUS 0.9993`); null in a log entry kept without texts (EVALUATION_LOG_CONTENT=none).',
      examples: ['unsafe\nS1'],
    }),
    flagged: Type.Boolean({ description: 'The guard’s own decision.', examples: [true] }),
    categories: Type.Array(enumOf(TOXICITY_CATEGORIES, {}), {
      description:
        'Warden’s toxicity categories the guard reported, mapped from its own codes (docs/guards.md).',
      examples: [['violence']],
    }),
    unmapped: Type.Array(Type.String(), {
      description:
        'The guard’s codes that are none of Warden’s categories, as it wrote them (`S2`, `illicit`).',
      examples: [[]],
    }),
    score: Type.Number({
      description:
        'The guard’s own score, 0..1: how likely the text breaks its policy (a custom rule’s `score` is 1 − this).',
      examples: [0.97],
    }),
  },
  {
    additionalProperties: false,
    description:
      'Only when a guard detector answered the rule: its answer for the worst text (docs/guards.md).',
    examples: [{ verdict: 'unsafe\nS1', flagged: true, categories: ['violence'], unmapped: [], score: 0.97 }],
  },
)

const CascadeResultSchema = Type.Object(
  {
    low: Type.Number({ description: 'The band’s lower bound.', examples: [0.2] }),
    high: Type.Number({ description: 'The band’s upper bound.', examples: [0.8] }),
    model_score: Type.Number({
      description: 'The offline model’s score (the worst text’s).',
      examples: [0.55],
    }),
    escalated: Type.Integer({
      description:
        'Texts whose model score was inside the band, bounds included, and so were asked of the guard; 0: the model answered alone (`method` model).',
      examples: [1],
    }),
  },
  {
    additionalProperties: false,
    description:
      'Only for a rule with a cascade (its `cascade`, or GUARD_<NAME>_CASCADE): what the offline model scored and whether the guard was asked.',
    examples: [{ low: 0.2, high: 0.8, model_score: 0.55, escalated: 1 }],
  },
)

const RuleResultSchema = Type.Object(
  {
    index: Type.Integer({ description: 'The rule’s position in its policy.', examples: [0] }),
    type: enumOf(RULE_TYPES, { description: 'The rule’s type.', examples: ['pii'] }),
    expected: enumOf(VERDICTS, { description: 'The verdict that satisfies the rule.', examples: ['pass'] }),
    status: enumOf(['pass', 'fail', 'masked', 'skipped', 'error'] as const, {
      description:
        'The rule’s verdict; masked when a mask rule (action mask) found something, which it replaces instead of failing (docs/masking.md); skipped when none of its targeted texts is present, error when it could not be evaluated (see reason).',
      examples: ['fail'],
    }),
    satisfied: Type.Boolean({
      description: 'Whether the status equals expected; skipped and masked count as satisfied.',
      examples: [false],
    }),
    score: Nullable(Type.Number(), {
      description: 'In 0..1 for scored types (the worst text’s); null for detectors.',
      examples: [null],
    }),
    threshold: Nullable(Type.Number(), {
      description: 'The threshold applied (the default 0.5 when unset); null for detectors.',
      examples: [null],
    }),
    method: enumOf(['detector', 'model', 'judge', 'guard'] as const, {
      description:
        'What produced the verdict: detector (pii, keywords, regex, length), model (the offline toxicity and prompt_injection classifiers that ship with Warden), judge, or guard (a guard detector the operator configured, named by `detector`). Under a cascade: model when the offline model was sure of every text, guard when the guard was asked.',
      examples: ['detector'],
    }),
    reason: Nullable(Type.String(), {
      description:
        'The judge’s one-line reason, what weighed most in a model’s score, or why the rule was skipped or errored.',
      examples: [null],
    }),
    findings: Type.Array(FindingSchema, {
      description:
        'Where each finding is, in order of text and offset: the first 1,000 of a rule; when it found more, `reason` says how many (“first 1000 of 262144 findings”). `redacted` and the log’s redaction still replace every one.',
      examples: [[FINDING_EXAMPLE]],
    }),
    detector: Type.Optional(
      Type.String({
        description: 'Only for a rule that names a guard detector: its name (GUARD_<NAME>_…, lower-cased).',
        examples: ['llamaguard'],
      }),
    ),
    guard: Type.Optional(GuardResultSchema),
    cascade: Type.Optional(CascadeResultSchema),
  },
  { additionalProperties: false },
)

const PolicyResultSchema = Type.Object(
  {
    id: Type.String({ description: 'The policy id.', examples: ['no-pii'] }),
    revision: Nullable(Type.Integer(), {
      description: 'The revision evaluated; null for a draft.',
      examples: [3],
    }),
    mode: enumOf(MODES, {
      description: 'enforce: the policy decides; monitor: reported, never decides.',
      examples: ['enforce'],
    }),
    on_error: enumOf(ON_ERROR, {
      description:
        'How an errored rule counted for the decision: fail_closed as a failure, fail_open as a pass.',
      examples: ['fail_closed'],
    }),
    draft: Type.Boolean({ description: 'True for a policy from draft_policies.', examples: [false] }),
    verdict: enumOf(['pass', 'fail', 'error'] as const, {
      description: 'fail when a rule is not satisfied; otherwise error when a rule errored; otherwise pass.',
      examples: ['fail'],
    }),
    rules: Type.Array(RuleResultSchema, {
      description: 'Each rule of the policy, in order.',
      examples: [[RULE_RESULT_EXAMPLE]],
    }),
  },
  { additionalProperties: false },
)

const RedactedSchema = Type.Object(
  {
    messages: Type.Array(
      Type.Object(
        {
          role: enumOf(MESSAGE_ROLES, { description: 'The message’s role, as sent.', examples: ['user'] }),
          content: Type.String({
            description: 'The message’s text with each finding replaced by [KIND].',
            examples: ['My card is [CREDIT_CARD], can I get a refund?'],
          }),
        },
        { additionalProperties: false },
      ),
      {
        description: 'Every message, redacted.',
        examples: [[{ role: 'user', content: 'My card is [CREDIT_CARD], can I get a refund?' }]],
      },
    ),
    context: Type.Array(Type.String(), {
      description: 'Every context document, redacted.',
      examples: [['Write to [EMAIL] for refunds.']],
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        messages: [{ role: 'user', content: 'My card is [CREDIT_CARD], can I get a refund?' }],
        context: [],
      },
    ],
    description:
      'Only when asked (redact: true): the messages and context with every finding of a pii, keywords or regex rule replaced by [KIND], overlapping findings merged.',
  },
)

const PlaceholderSchema = Type.Object(
  {
    placeholder: Type.String({
      description: 'The placeholder as it stands in the masked texts.',
      examples: ['[EMAIL_1]'],
    }),
    kind: Type.String({
      description: 'What was masked: a pii kind (email, credit_card, …), keyword or regex.',
      examples: ['email'],
    }),
    text: Type.String({
      description: 'The value it stands for, as written.',
      examples: ['jane@example.com'],
    }),
  },
  { additionalProperties: false },
)

const MaskedSchema = Type.Object(
  {
    messages: Type.Array(MessageAnswerSchema, {
      description:
        'The messages exactly as sent, each masked finding replaced by its placeholder: in string content, in text and refusal parts, and inside tool-call arguments’ JSON strings (the arguments stay valid JSON). What to send on instead of the conversation.',
      examples: [[{ role: 'user', content: 'Write to me at [EMAIL_1] about my refund.' }]],
    }),
    context: Type.Array(Type.String(), {
      description: 'The context documents, masked the same way.',
      examples: [['Customer [EMAIL_1] asked twice.']],
    }),
    placeholders: Type.Array(PlaceholderSchema, {
      description:
        'Each placeholder issued and the value it stands for, numbered per kind in order of first appearance over the conversation; the same value is always the same placeholder, and a number the conversation already holds as literal text is skipped. Never kept in the evaluation log.',
      examples: [[{ placeholder: '[EMAIL_1]', kind: 'email', text: 'jane@example.com' }]],
    }),
  },
  {
    additionalProperties: false,
    description:
      'Only with action mask: the conversation with every finding of the enforce policies’ mask rules replaced by a numbered placeholder, and the placeholders (docs/masking.md).',
    examples: [
      {
        messages: [{ role: 'user', content: 'Write to me at [EMAIL_1] about my refund.' }],
        context: [],
        placeholders: [{ placeholder: '[EMAIL_1]', kind: 'email', text: 'jane@example.com' }],
      },
    ],
  },
)

export const EvaluationSchema = Type.Object(
  {
    id: Type.String({
      description: 'The evaluation’s id, a UUIDv7.',
      examples: ['0193c1c0-7b9e-7cc4-9d7c-3f1f2b8a9e10'],
    }),
    application_id: Type.String({ description: 'The application evaluated.', examples: ['support-bot'] }),
    created: Type.Integer({ description: 'Unix seconds (UTC).', examples: [1795316060] }),
    verdict: enumOf(VERDICTS, {
      description:
        'fail when an enforce policy counts as failed (an error counts as fail under fail_closed).',
      examples: ['fail'],
    }),
    action: enumOf(['allow', 'mask', 'override', 'block'] as const, {
      description:
        'allow when the verdict is pass and nothing was masked; mask when the verdict is pass and an enforce policy’s mask rule found something (send `masked` instead of the conversation; docs/masking.md); override (send override_response instead) when the first failing enforce policy with an override_response has one; block otherwise.',
      examples: ['override'],
    }),
    override_response: Nullable(Type.String(), {
      description: 'With action override: the text to send instead of the model reply.',
      examples: ['Sorry, I cannot share that.'],
    }),
    latency_ms: Type.Number({ description: 'Time spent evaluating, in milliseconds.', examples: [0.41] }),
    policies: Type.Array(PolicyResultSchema, {
      description: 'Each policy evaluated, in order.',
      examples: [[POLICY_RESULT_EXAMPLE]],
    }),
    redacted: Type.Optional(RedactedSchema),
    masked: Type.Optional(MaskedSchema),
    not_read: Type.Optional(
      Type.Array(NotReadSchema, {
        description:
          'Present when the conversation carried something no rule read: each non-text part (images, audio, files) and each audio or function_call field, in order. Absent when everything was read.',
        examples: [[{ index: 1, part: 1, type: 'image_url' }]],
      }),
    ),
  },
  { $id: 'Evaluation', title: 'Evaluation', additionalProperties: false },
)
export type Evaluation = Static<typeof EvaluationSchema>

/** The evaluation log (docs/log-and-tests.md). */

/** What the log keeps of the evaluated texts (EVALUATION_LOG_CONTENT). */
export const LOG_CONTENTS = ['redacted', 'none', 'full'] as const

const {
  redacted: _redacted,
  masked: _masked,
  not_read: _notRead,
  ...answerFields
} = EvaluationSchema.properties

const LOGGED_EXAMPLE = {
  id: '0193c1c0-7b9e-7cc4-9d7c-3f1f2b8a9e10',
  application_id: 'support-bot',
  created: 1795316060,
  verdict: 'fail',
  action: 'override',
  override_response: 'Sorry, I cannot share that.',
  latency_ms: 0.41,
  policies: [
    {
      ...POLICY_RESULT_EXAMPLE,
      rules: [{ ...RULE_RESULT_EXAMPLE, findings: [{ ...FINDING_EXAMPLE, text: '[CREDIT_CARD]' }] }],
    },
  ],
  key_id: '0193c1b2-52d4-7e4b-a1c9-6a1f0e2d3c4b',
  request_id: '0193c1c0-7b9a-7f31-8d2e-5b6c7d8e9f01',
  source: 'api',
  content: 'redacted',
  messages: [{ role: 'user', content: 'My card is [CREDIT_CARD], can I get a refund?' }],
  context: [],
}

export const LoggedEvaluationSchema = Type.Object(
  {
    ...answerFields,
    key_id: Type.String({
      description: 'The id of the API key that asked for the evaluation (as `warden keys list` shows it).',
      examples: ['0193c1b2-52d4-7e4b-a1c9-6a1f0e2d3c4b'],
    }),
    request_id: Type.String({
      description:
        'The X-Request-Id of the request that asked: a guarded chat completion’s input and output evaluations share it.',
      examples: ['0193c1c0-7b9a-7f31-8d2e-5b6c7d8e9f01'],
    }),
    source: enumOf(EVALUATION_SOURCES, {
      description:
        'What asked: api (POST …/evaluations), playground (the same call from the console’s playground, its `source` playground), chat_input or chat_output (a guarded chat completion’s check of the conversation before, and of the reply after, the model call).',
      examples: ['api'],
    }),
    content: enumOf(LOG_CONTENTS, {
      description:
        'What the log kept of the texts (EVALUATION_LOG_CONTENT when the entry was written): redacted — the texts with every pii, keywords and regex finding replaced by [KIND], and those findings’ `text` by the same label; none — no text at all (`messages` and `context` null, every finding’s `text` null, the judge’s reasons null); full — everything as evaluated.',
      examples: ['redacted'],
    }),
    messages: Nullable(
      Type.Array(
        Type.Object(
          {
            role: enumOf(MESSAGE_ROLES, { description: 'The message’s role, as sent.', examples: ['user'] }),
            content: Type.String({
              description: 'The message’s text (parts joined with "\\n"), redacted unless `content` is full.',
              examples: ['My card is [CREDIT_CARD], can I get a refund?'],
            }),
          },
          { additionalProperties: false },
        ),
      ),
      {
        description: 'The conversation evaluated, as `content` says; null when it is none.',
        examples: [[{ role: 'user', content: 'My card is [CREDIT_CARD], can I get a refund?' }]],
      },
    ),
    context: Nullable(Type.Array(Type.String()), {
      description: 'The context documents evaluated, as `content` says; null when it is none.',
      examples: [['Refunds are possible within 30 days of delivery.']],
    }),
  },
  {
    $id: 'LoggedEvaluation',
    title: 'LoggedEvaluation',
    description:
      'An evaluation as the log keeps it: the answer it gave (with `policies[].revision` the revisions used), who asked, and the conversation as EVALUATION_LOG_CONTENT allows.',
    additionalProperties: false,
    examples: [LOGGED_EXAMPLE],
  },
)
export type LoggedEvaluation = Static<typeof LoggedEvaluationSchema>

export const LoggedEvaluationPageSchema = PageSchema(
  Type.Ref(LoggedEvaluationSchema),
  'Logged evaluations, newest first.',
  LOGGED_EXAMPLE,
)

/** Unix seconds up to 9999-12-31: a larger value is a 422, never a number the store rejects. */
const UNIX_SECONDS_MAX = 253_402_300_799

export const EvaluationListQuerySchema = Type.Object(
  {
    limit: ListQuerySchema.properties.limit,
    cursor: ListQuerySchema.properties.cursor,
    verdict: Type.Optional(
      enumOf(VERDICTS, { description: 'Only evaluations with this verdict.', examples: ['fail'] }),
    ),
    source: Type.Optional(
      enumOf(EVALUATION_SOURCES, {
        description:
          'Only evaluations that this asked for: api, playground, chat_input or chat_output (as each entry’s `source`).',
        examples: ['playground'],
      }),
    ),
    policy_id: Type.Optional(
      ResourceIdSchema({
        description: 'Only evaluations that evaluated this policy (stored or draft).',
        examples: ['no-pii'],
      }),
    ),
    since: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: UNIX_SECONDS_MAX,
        description: 'Only evaluations created at or after this time, Unix seconds.',
        examples: [1795312460],
      }),
    ),
    until: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: UNIX_SECONDS_MAX,
        description: 'Only evaluations created at or before this time, Unix seconds.',
        examples: [1795316060],
      }),
    ),
  },
  { additionalProperties: false },
)
export type EvaluationListQuery = Static<typeof EvaluationListQuerySchema>

export const LoggedEvaluationParamsSchema = Type.Object({
  application_id: ApplicationIdParam,
  evaluation_id: ResourceIdSchema({
    description: 'The id of the evaluation, from its answer or the log.',
    examples: ['0193c1c0-7b9e-7cc4-9d7c-3f1f2b8a9e10'],
  }),
})
export type LoggedEvaluationParams = Static<typeof LoggedEvaluationParamsSchema>
