import { type Static, Type } from '@sinclair/typebox'
import {
  ApplicationIdParam,
  Nullable,
  PageSchema,
  ReadOnlyInteger,
  ReadOnlyString,
  ResourceIdSchema,
  TimestampSchema,
} from './common.js'

export const RULE_TYPES = [
  'factuality',
  'relevance',
  'toxicity',
  'prompt_injection',
  'pii',
  'keywords',
  'regex',
  'length',
  'custom',
  'tools',
] as const
export type RuleType = (typeof RULE_TYPES)[number]

export const TARGETS = ['input', 'output', 'user', 'assistant', 'system', 'context'] as const
export const PII_KINDS = [
  'email',
  'phone',
  'credit_card',
  'iban',
  'ssn',
  'ip_address',
  'api_key',
  'crypto_wallet',
  'mac_address',
  'us_itin',
  'us_bank_routing',
  'uk_nino',
  'uk_nhs',
  'es_nif',
  'es_nie',
  'it_fiscal_code',
  'pl_pesel',
  'in_aadhaar',
  'in_pan',
  'sg_nric',
  'au_tfn',
  'au_abn',
  'au_medicare',
  'date_of_birth',
] as const
export const VERDICTS = ['pass', 'fail'] as const
export const MODES = ['enforce', 'monitor'] as const
export type PolicyMode = (typeof MODES)[number]
export const ON_ERROR = ['fail_closed', 'fail_open'] as const
export type OnError = (typeof ON_ERROR)[number]

const ruleType = Type.Union(
  RULE_TYPES.map((t) => Type.Literal(t)),
  {
    description:
      'Kind of rule: factuality, relevance, toxicity, prompt_injection, pii, keywords, regex, length, custom or tools.',
    examples: ['factuality'],
  },
)
// A plain `enum` keeps the JSON Schema (and its error message) to one keyword instead of an anyOf.
const ruleTypeSchema = Type.Unsafe<RuleType>({
  type: 'string',
  enum: [...RULE_TYPES],
  description: ruleType.description,
  examples: ruleType.examples,
})
const verdictSchema = Type.Unsafe<(typeof VERDICTS)[number]>({ type: 'string', enum: [...VERDICTS] })
const expectedDescription =
  'The verdict that satisfies the rule, pass or fail; null or absent means pass, and responses show pass.'
const value = Nullable(Type.String({ maxLength: 20_000 }), {
  description:
    'Per type: the pattern of a regex rule (RE2 syntax, linear-time), the maximum length of a length rule as a decimal integer; otherwise kept as given. Up to 20,000 characters.',
  examples: ['\\b(?:password|secret)\\b'],
})
const threshold = Nullable(Type.Number({ minimum: 0, maximum: 1 }), {
  description:
    'Score threshold in 0..1: the minimum score for factuality, relevance and custom, the maximum for toxicity and prompt_injection. Null means the default, 0.5.',
  examples: [0.7],
})
const flagged = Nullable(
  Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
    minItems: 1,
    maxItems: 1000,
    uniqueItems: true,
  }),
  {
    description:
      'Per type: the phrases of a keywords rule (required), the entity kinds of a pii rule (email, phone, credit_card, iban, ssn, ip_address, api_key, crypto_wallet, mac_address, us_itin, us_bank_routing, uk_nino, uk_nhs, es_nif, es_nie, it_fiscal_code, pl_pesel, in_aadhaar, in_pan, sg_nric, au_tfn, au_abn, au_medicare, date_of_birth; null means all), the categories of a toxicity rule (null: the offline model scores toxicity in general and the judge rates all six; listed: the highest score of those categories), the tool names a tools rule allows (required; `*` matches any run of characters). 1 to 1,000 distinct items of 1 to 256 characters.',
    examples: [['email', 'credit_card']],
  },
)

export const DETECTORS = ['model', 'judge'] as const
/** A rule's `detector`: `model`, `judge`, or a guard detector's name (NAME of GUARD_<NAME>_…, lower-cased). */
export type Detector = string
const DETECTOR_DESCRIPTION =
  'toxicity and prompt_injection: model (the offline classifier that ships with Warden), judge (the configured judge model; without one the rule is an error), or the name of a guard detector the operator configured (GUARD_<NAME>_…, NAME lower-cased; docs/guards.md). custom: judge or a guard detector that follows a policy. Null or absent: the judge when one is configured, else the model (the server logs which at start-up, and the console shows it). A guard that is not configured, not granted to the workspace, or whose format cannot serve the rule type: 422. Returned only when set; on any other rule type, 422.'
const detectorString = Type.String({
  pattern: '^[a-z0-9_]{1,64}$',
  description: DETECTOR_DESCRIPTION,
  examples: ['model', 'llamaguard'],
})
const detector = Nullable(detectorString, { description: DETECTOR_DESCRIPTION, examples: ['model'] })
const CASCADE_DESCRIPTION =
  "With a guard detector in `detector` (toxicity, prompt_injection): the band of the offline model's score inside which the guard is asked, bounds included; outside it the model answers alone. low < high, both in 0..1. Null or absent: the guard's GUARD_<NAME>_CASCADE, else none (the guard is asked for every text). Returned only when set."
const band = Type.Object(
  {
    low: Type.Number({
      minimum: 0,
      maximum: 1,
      description: 'The lowest offline model score at which the guard is asked.',
      examples: [0.2],
    }),
    high: Type.Number({
      minimum: 0,
      maximum: 1,
      description: 'The highest offline model score at which the guard is asked; greater than low.',
      examples: [0.8],
    }),
  },
  { additionalProperties: false, description: CASCADE_DESCRIPTION, examples: [{ low: 0.2, high: 0.8 }] },
)
const cascade = Nullable(band, { description: CASCADE_DESCRIPTION, examples: [{ low: 0.2, high: 0.8 }] })

export const RULE_ACTIONS = ['block', 'mask'] as const
export type RuleAction = (typeof RULE_ACTIONS)[number]
const ACTION_DESCRIPTION =
  "What a finding does: block (the default: it fails the rule) or mask (pii, keywords and regex rules whose expected is pass): findings are replaced by numbered placeholders ([EMAIL_1]) and the conversation goes on; the rule is `masked`, the evaluation's action `mask`, and the answer carries `masked` (docs/masking.md). Returned only when set."
const actionSchema = Type.Unsafe<RuleAction>({
  type: 'string',
  enum: [...RULE_ACTIONS],
  description: ACTION_DESCRIPTION,
  examples: ['mask'],
})
const action = Nullable(actionSchema, { description: ACTION_DESCRIPTION, examples: ['mask'] })
const RESTORE_DESCRIPTION =
  "Mask rules only: whether the guarded proxies put the values this rule masked in the input back into the model's reply before the client sees it (default true). false keeps the placeholders (values the end user may not see back). Returned only when set."
const restoreSchema = Type.Boolean({ description: RESTORE_DESCRIPTION, examples: [false] })
const restore = Nullable(restoreSchema, {
  description: RESTORE_DESCRIPTION,
  examples: [false],
})
const ALLOWED_DESCRIPTION =
  "Values a team's own text legitimately holds. pii, keywords, regex: a finding whose text equals an item (after Unicode NFKC and case folding) does not count (a support address, a test card). toxicity, prompt_injection: each occurrence of an item is read as neutral text before scoring (the team's own template wording). 1 to 1,000 distinct items of 1 to 256 characters. Returned only when set."
const allowedList = Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
  minItems: 1,
  maxItems: 1000,
  uniqueItems: true,
  description: ALLOWED_DESCRIPTION,
  examples: [['support@acme.example']],
})
const allowed = Nullable(allowedList, {
  description: ALLOWED_DESCRIPTION,
  examples: [['support@acme.example']],
})

export const PolicyRuleInputSchema = Type.Object(
  {
    type: ruleTypeSchema,
    expected: Type.Optional(
      Nullable(verdictSchema, { description: expectedDescription, examples: ['pass'] }),
    ),
    value: Type.Optional(value),
    threshold: Type.Optional(threshold),
    flagged: Type.Optional(flagged),
    detector: Type.Optional(detector),
    cascade: Type.Optional(cascade),
    action: Type.Optional(action),
    restore: Type.Optional(restore),
    allowed: Type.Optional(allowed),
  },
  { additionalProperties: false },
)
export type PolicyRuleInput = Static<typeof PolicyRuleInputSchema>

export const PolicyRuleSchema = Type.Object(
  {
    type: ruleTypeSchema,
    expected: Type.Unsafe<(typeof VERDICTS)[number]>({
      type: 'string',
      enum: [...VERDICTS],
      description: expectedDescription,
      examples: ['pass'],
    }),
    value,
    threshold,
    flagged,
    detector: Type.Optional(detectorString),
    cascade: Type.Optional(band),
    action: Type.Optional(actionSchema),
    restore: Type.Optional(restoreSchema),
    allowed: Type.Optional(allowedList),
  },
  { $id: 'PolicyRule', title: 'PolicyRule', additionalProperties: false },
)
export type PolicyRule = Static<typeof PolicyRuleSchema>

const policyId = ResourceIdSchema({
  description: 'Unique within its application, chosen by the client: 1 to 128 URL-safe characters.',
  examples: ['no-pii'],
})
const target = Type.Array(Type.Unsafe<(typeof TARGETS)[number]>({ type: 'string', enum: [...TARGETS] }), {
  minItems: 1,
  maxItems: 6,
  uniqueItems: true,
  description:
    'Parts of a conversation the rules read: 1 to 6 distinct values of input, output, user, assistant, system, context.',
  examples: [['input', 'output']],
})
const definition = Nullable(Type.String({ minLength: 1, maxLength: 20_000 }), {
  description:
    'What the policy means, in words; required when a rule is of type custom. 1 to 20,000 characters.',
  examples: ['Replies must never reveal customer contact details.'],
})
const overrideResponse = Nullable(Type.String({ maxLength: 20_000 }), {
  description: 'Text sent instead of the model reply when the policy is violated, 0 to 20,000 characters.',
  examples: ['Sorry, I cannot share that.'],
})
const modeDescription =
  'enforce (the default): the policy decides the outcome of an evaluation; monitor: it is evaluated and reported, and never changes the verdict or the action. Null or absent means enforce, and responses show enforce.'
const onErrorDescription =
  'How a rule that could not be evaluated (no judge, a judge timeout, an answer that is not a score) counts for the decision: fail_closed (the default) as a failure, fail_open as a pass. Null or absent means fail_closed, and responses show fail_closed.'
const modeInput = Nullable(Type.Unsafe<PolicyMode>({ type: 'string', enum: [...MODES] }), {
  description: modeDescription,
  examples: ['enforce'],
})
const onErrorInput = Nullable(Type.Unsafe<OnError>({ type: 'string', enum: [...ON_ERROR] }), {
  description: onErrorDescription,
  examples: ['fail_closed'],
})
const rulesDescription = 'The rules, 1 to 64; the policy is violated when any rule is not satisfied.'
const rulesExample = [
  { type: 'pii', expected: 'pass', value: null, threshold: null, flagged: ['email', 'phone'] },
  { type: 'factuality', expected: 'pass', value: null, threshold: 0.7, flagged: null },
]

/** What a client may send back from a policy it read: type-checked, then ignored. */
const readOnlyFields = {
  application_id: ReadOnlyString('The owning application.', 'support-bot'),
  revision: ReadOnlyInteger('Revision number.', 1),
  created: ReadOnlyInteger('Creation time, Unix seconds.', 1767225600),
  updated: ReadOnlyInteger('Last change, Unix seconds.', 1767225600),
}

/** The most rules a policy holds. */
export const MAX_RULES = 64

export const PolicyCreateSchema = Type.Object(
  {
    id: policyId,
    rules: Type.Array(PolicyRuleInputSchema, {
      minItems: 1,
      maxItems: MAX_RULES,
      description: rulesDescription,
      examples: [rulesExample],
    }),
    target,
    definition: Type.Optional(definition),
    override_response: Type.Optional(overrideResponse),
    mode: Type.Optional(modeInput),
    on_error: Type.Optional(onErrorInput),
    ...readOnlyFields,
  },
  { additionalProperties: false, title: 'PolicyCreate' },
)
export type PolicyCreate = Static<typeof PolicyCreateSchema>

export const PolicySchema = Type.Object(
  {
    id: policyId,
    application_id: ResourceIdSchema({
      description: 'The application the policy belongs to.',
      examples: ['support-bot'],
    }),
    rules: Type.Array(Type.Ref(PolicyRuleSchema), {
      description: rulesDescription,
      examples: [rulesExample],
    }),
    target,
    definition,
    override_response: overrideResponse,
    mode: Type.Unsafe<PolicyMode>({
      type: 'string',
      enum: [...MODES],
      description: modeDescription,
      examples: ['enforce'],
    }),
    on_error: Type.Unsafe<OnError>({
      type: 'string',
      enum: [...ON_ERROR],
      description: onErrorDescription,
      examples: ['fail_closed'],
    }),
    revision: Type.Integer({
      minimum: 1,
      description: 'Starts at 1 and grows by 1 on every change to the policy.',
      examples: [1],
    }),
    created: TimestampSchema('Creation time, Unix seconds (UTC), set by the server.'),
    updated: TimestampSchema('Last change, Unix seconds (UTC), set by the server.'),
  },
  { $id: 'Policy', title: 'Policy', additionalProperties: false },
)
export type Policy = Static<typeof PolicySchema>

export const PolicyCollectionParamsSchema = Type.Object({ application_id: ApplicationIdParam })
export type PolicyCollectionParams = Static<typeof PolicyCollectionParamsSchema>

export const PolicyPatchSchema = Type.Object(
  {
    id: Type.Optional(
      ResourceIdSchema({
        description: 'Ids cannot change; if sent, it must equal the id in the path.',
        examples: ['no-pii'],
      }),
    ),
    rules: Type.Optional(
      Type.Array(PolicyRuleInputSchema, {
        minItems: 1,
        maxItems: MAX_RULES,
        description: `${rulesDescription} Replaces the whole list.`,
        examples: [rulesExample],
      }),
    ),
    target: Type.Optional(target),
    definition: Type.Optional(definition),
    override_response: Type.Optional(overrideResponse),
    mode: Type.Optional(modeInput),
    on_error: Type.Optional(onErrorInput),
    ...readOnlyFields,
  },
  { additionalProperties: false, title: 'PolicyPatch' },
)
export type PolicyPatch = Static<typeof PolicyPatchSchema>

const POLICY_EXAMPLE = {
  id: 'no-pii',
  application_id: 'support-bot',
  rules: rulesExample,
  target: ['output'],
  definition: null,
  override_response: 'Sorry, I cannot share that.',
  mode: 'enforce',
  on_error: 'fail_closed',
  revision: 2,
  created: 1767225600,
  updated: 1767229200,
}

export const PolicyPageSchema = PageSchema(
  Type.Ref(PolicySchema),
  'Policies in creation order.',
  POLICY_EXAMPLE,
)
export const PolicyRevisionPageSchema = PageSchema(
  Type.Ref(PolicySchema),
  'Every version of the policy, newest first; `updated` is when that version was written.',
  POLICY_EXAMPLE,
)

const policyIdParam = ResourceIdSchema({ description: 'The id of the policy.', examples: ['no-pii'] })
export const PolicyParamsSchema = Type.Object({
  application_id: ApplicationIdParam,
  policy_id: policyIdParam,
})
export type PolicyParams = Static<typeof PolicyParamsSchema>
export const PolicyRevisionParamsSchema = Type.Object({
  application_id: ApplicationIdParam,
  policy_id: policyIdParam,
  revision: Type.Integer({ minimum: 1, description: 'The revision number, from 1.', examples: [2] }),
})
export type PolicyRevisionParams = Static<typeof PolicyRevisionParamsSchema>
