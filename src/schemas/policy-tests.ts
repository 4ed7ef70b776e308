import { type Static, Type } from '@sinclair/typebox'
import {
  enumOf,
  NOT_BLANK_PATTERN,
  Nullable,
  PageSchema,
  ReadOnlyInteger,
  ReadOnlyString,
  ResourceIdSchema,
  TimestampSchema,
} from './common.js'
import { ContextSchema, EvaluationSchema, MessageSchema } from './evaluations.js'
import type { ConversationMessage } from './messages.js'
import { PolicyCreateSchema, PolicyParamsSchema, VERDICTS } from './policies.js'

/** A policy's test cases (docs/log-and-tests.md), and a test run over them. */

export const RULE_STATUSES = ['pass', 'fail', 'masked', 'skipped', 'error'] as const
export type RuleStatus = (typeof RULE_STATUSES)[number]
export const OUTCOMES = ['passed', 'failed', 'skipped'] as const
export type Outcome = (typeof OUTCOMES)[number]

/** The most test cases one policy may hold: a PATCH runs them all before it writes. */
export const MAX_TESTS_PER_POLICY = 1000

const testId = ResourceIdSchema({
  description:
    'Unique within its policy. Chosen by the client (1 to 128 URL-safe characters) or, when absent or null, a server-generated UUIDv7.',
  examples: ['card-in-reply'],
})
const name = Type.String({
  minLength: 1,
  maxLength: 256,
  pattern: NOT_BLANK_PATTERN,
  description: 'What the case checks, 1 to 256 characters, not only white space.',
  examples: ['A card number in the reply is overridden'],
})
const MESSAGES_EXAMPLE = [
  { role: 'user', content: 'What card did I pay with?' },
  { role: 'assistant', content: 'You paid with 4111 1111 1111 1111.' },
]
const messages = Type.Array(MessageSchema, {
  minItems: 1,
  maxItems: 1000,
  description: 'The conversation, 1 to 1,000 messages, exactly as an evaluation request takes them.',
  examples: [MESSAGES_EXAMPLE],
})

const ExpectedRuleSchema = Type.Object(
  {
    index: Type.Integer({
      minimum: 0,
      maximum: 63,
      description: 'The rule’s position in the policy, from 0.',
      examples: [0],
    }),
    status: enumOf(RULE_STATUSES, {
      description:
        'The status that rule must have: pass, fail, masked (a mask rule found something), skipped or error.',
      examples: ['fail'],
    }),
  },
  { additionalProperties: false },
)
const expectedRules = Type.Array(ExpectedRuleSchema, {
  maxItems: 64,
  description: 'Rules whose status must be as listed, each index at most once.',
  examples: [[{ index: 0, status: 'fail' }]],
})
const expectedVerdict = enumOf(VERDICTS, {
  description:
    'The verdict the policy must give: fail when it is violated (a rule not satisfied, or an error under fail_closed), else pass. A monitoring policy is judged as if it enforced.',
  examples: ['fail'],
})

export const ExpectedInputSchema = Type.Object(
  {
    verdict: expectedVerdict,
    rules: Type.Optional(
      Nullable(expectedRules, {
        description:
          'Rules whose status must be as listed, each index at most once; null or absent: only the verdict is checked.',
        examples: [[{ index: 0, status: 'fail' }]],
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'What the policy must answer for this conversation.',
    examples: [{ verdict: 'fail', rules: [{ index: 0, status: 'fail' }] }],
  },
)

/** What the case expects, as responses show it: `rules` null when only the verdict is checked. */
export const ExpectedSchema = Type.Object(
  {
    verdict: expectedVerdict,
    rules: Nullable(expectedRules, {
      description: 'Rules whose status must be as listed; null when only the verdict is checked.',
      examples: [[{ index: 0, status: 'fail' }]],
    }),
  },
  {
    additionalProperties: false,
    description: 'What the policy must answer for this conversation.',
    examples: [{ verdict: 'fail', rules: [{ index: 0, status: 'fail' }] }],
  },
)
export type Expected = Static<typeof ExpectedSchema>

/** What a client may send back from a test case it read: type-checked, then ignored. */
const readOnlyFields = {
  application_id: ReadOnlyString('The owning application.', 'support-bot'),
  policy_id: ReadOnlyString('The owning policy.', 'no-pii'),
  created: ReadOnlyInteger('Creation time, Unix seconds.', 1767225600),
  updated: ReadOnlyInteger('Last change, Unix seconds.', 1767225600),
}

export const PolicyTestCreateSchema = Type.Object(
  {
    id: Type.Optional(Nullable(testId, { description: testId.description, examples: testId.examples })),
    name,
    messages,
    context: Type.Optional(ContextSchema),
    expected: ExpectedInputSchema,
    ...readOnlyFields,
  },
  { additionalProperties: false, title: 'PolicyTestCreate' },
)
/** As sent; the service reads the messages as `readableMessages` reads them. */
export type PolicyTestCreateBody = Static<typeof PolicyTestCreateSchema>
export type PolicyTestCreate = Omit<PolicyTestCreateBody, 'messages'> & { messages: ConversationMessage[] }

export const PolicyTestPatchSchema = Type.Object(
  {
    id: Type.Optional(
      ResourceIdSchema({
        description: 'Ids cannot change; if sent, it must equal the id in the path.',
        examples: ['card-in-reply'],
      }),
    ),
    name: Type.Optional(name),
    messages: Type.Optional({ ...messages, description: `${messages.description} Replaces the whole list.` }),
    context: Type.Optional(ContextSchema),
    expected: Type.Optional(
      Type.Object(
        {
          verdict: Type.Optional(expectedVerdict),
          rules: Type.Optional(
            Nullable(expectedRules, {
              description: 'Replaces the whole list; null: only the verdict is checked.',
              examples: [[{ index: 0, status: 'fail' }]],
            }),
          ),
        },
        {
          additionalProperties: false,
          description: 'Merged into what the case expects.',
          examples: [{ verdict: 'pass' }],
        },
      ),
    ),
    ...readOnlyFields,
  },
  { additionalProperties: false, title: 'PolicyTestPatch' },
)
/** As sent; the service reads the messages as `readableMessages` reads them. */
export type PolicyTestPatchBody = Static<typeof PolicyTestPatchSchema>
export type PolicyTestPatch = Omit<PolicyTestPatchBody, 'messages'> & { messages?: ConversationMessage[] }

export const PolicyTestSchema = Type.Object(
  {
    id: testId,
    application_id: ResourceIdSchema({
      description: 'The application the policy belongs to.',
      examples: ['support-bot'],
    }),
    policy_id: ResourceIdSchema({ description: 'The policy the case belongs to.', examples: ['no-pii'] }),
    name,
    messages,
    context: ContextSchema,
    expected: ExpectedSchema,
    created: TimestampSchema('Creation time, Unix seconds (UTC), set by the server.'),
    updated: TimestampSchema('Last change, Unix seconds (UTC), set by the server.'),
  },
  { $id: 'PolicyTest', title: 'PolicyTest', additionalProperties: false },
)
/** As sent; the service reads the messages as `readableMessages` reads them. */
export type PolicyTestBody = Static<typeof PolicyTestSchema>
export type PolicyTest = Omit<PolicyTestBody, 'messages'> & { messages: ConversationMessage[] }

const POLICY_TEST_EXAMPLE: PolicyTest = {
  id: 'card-in-reply',
  application_id: 'support-bot',
  policy_id: 'no-pii',
  name: 'A card number in the reply is overridden',
  messages: MESSAGES_EXAMPLE as PolicyTest['messages'],
  context: null,
  expected: { verdict: 'fail', rules: [{ index: 0, status: 'fail' }] },
  created: 1767225600,
  updated: 1767225600,
}

export const PolicyTestPageSchema = PageSchema(
  Type.Ref(PolicyTestSchema),
  'Test cases in creation order.',
  POLICY_TEST_EXAMPLE,
)

/** The cases' collection is under its policy's path. */
export const PolicyTestCollectionParamsSchema = PolicyParamsSchema
export const PolicyTestParamsSchema = Type.Object({
  ...PolicyParamsSchema.properties,
  test_id: ResourceIdSchema({ description: 'The id of the test case.', examples: ['card-in-reply'] }),
})

export const PolicyTestRunRequestSchema = Type.Object(
  {
    draft: Type.Optional(
      Nullable(PolicyCreateSchema, {
        description:
          'A policy body, validated exactly like a create (its id must be the policy’s), to run the cases against instead of the current revision; nothing is stored. Null or absent: the current revision.',
        examples: [
          {
            id: 'no-pii',
            rules: [{ type: 'pii', flagged: ['credit_card'] }],
            target: ['output'],
            override_response: 'Sorry, I cannot share that.',
          },
        ],
      }),
    ),
  },
  { additionalProperties: false, title: 'PolicyTestRunRequest' },
)
export type PolicyTestRunRequest = Static<typeof PolicyTestRunRequestSchema>

const ActualSchema = Type.Object(
  {
    verdict: enumOf(VERDICTS, {
      description:
        'The verdict the policy gave: fail when a rule was not satisfied or, under fail_closed, when one errored; else pass.',
      examples: ['pass'],
    }),
    rules: Type.Array(
      Type.Object(
        {
          index: Type.Integer({ description: 'The rule’s position in the policy.', examples: [0] }),
          status: enumOf(RULE_STATUSES, { description: 'The status it had.', examples: ['pass'] }),
        },
        { additionalProperties: false },
      ),
      {
        description: 'Every rule of the policy, in order, with its status.',
        examples: [[{ index: 0, status: 'pass' }]],
      },
    ),
  },
  {
    additionalProperties: false,
    description: 'What the policy answered.',
    examples: [{ verdict: 'pass', rules: [{ index: 0, status: 'pass' }] }],
  },
)

export const PolicyTestResultSchema = Type.Object(
  {
    test_id: Type.String({ description: 'The test case.', examples: ['card-in-reply'] }),
    outcome: enumOf(OUTCOMES, {
      description:
        'passed: the verdict and every listed rule are as expected; failed: they are not; skipped: the case needs a judge and none is configured.',
      examples: ['failed'],
    }),
    expected: ExpectedSchema,
    actual: ActualSchema,
    evaluation: Type.Ref(EvaluationSchema),
  },
  { $id: 'PolicyTestResult', title: 'PolicyTestResult', additionalProperties: false },
)
export type PolicyTestResult = Static<typeof PolicyTestResultSchema>

export const PolicyTestRunSchema = Type.Object(
  {
    policy_id: Type.String({ description: 'The policy whose cases ran.', examples: ['no-pii'] }),
    revision: Nullable(Type.Integer(), {
      description: 'The revision the cases ran against; null for a draft.',
      examples: [3],
    }),
    summary: Type.Object(
      {
        total: Type.Integer({ description: 'Cases run.', examples: [3] }),
        passed: Type.Integer({ description: 'Cases that passed.', examples: [1] }),
        failed: Type.Integer({ description: 'Cases that failed.', examples: [1] }),
        skipped: Type.Integer({
          description: 'Cases that need a judge, with none configured.',
          examples: [1],
        }),
      },
      {
        additionalProperties: false,
        description: 'How many cases had each outcome.',
        examples: [{ total: 3, passed: 1, failed: 1, skipped: 1 }],
      },
    ),
    results: Type.Array(Type.Ref(PolicyTestResultSchema), {
      description: 'Each case, in creation order.',
      examples: [[]],
    }),
  },
  { $id: 'PolicyTestRun', title: 'PolicyTestRun', additionalProperties: false },
)
export type PolicyTestRun = Static<typeof PolicyTestRunSchema>

/** The query of a policy PATCH. */
export const PolicyPatchQuerySchema = Type.Object(
  {
    skip_tests: Type.Optional(
      Type.Boolean({
        description:
          'true: make the change without running the policy’s test cases first. Only true or false.',
        examples: [true],
      }),
    ),
  },
  { additionalProperties: false },
)
