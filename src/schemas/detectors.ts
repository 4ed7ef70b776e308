import { type Static, Type } from '@sinclair/typebox'
import { enumOf, Nullable } from './common.js'
import { RULE_TYPES } from './policies.js'

/** What scores rules in this workspace (docs/guards.md, "Which detector scores a rule"). */

const DetectorSchema = Type.Object(
  {
    name: Type.String({
      description: 'What a rule’s `detector` names: model, judge, or a guard detector’s name.',
      examples: ['llamaguard'],
    }),
    kind: enumOf(['model', 'judge', 'guard'] as const, {
      description:
        'model: the offline classifiers that ship with Warden; judge: the configured judge model; guard: a guard detector the operator configured (GUARD_<NAME>_…).',
      examples: ['guard'],
    }),
    configured: Type.Boolean({
      description: 'Whether it can answer: the judge only when JUDGE_BASE_URL is set; the others always.',
      examples: [true],
    }),
    format: Nullable(Type.String(), {
      description: 'A guard’s format (GUARD_<NAME>_FORMAT); null for model and judge.',
      examples: ['llama-guard'],
    }),
    rule_types: Type.Array(enumOf(RULE_TYPES), {
      description: 'The rule types whose `detector` may name it.',
      examples: [['toxicity']],
    }),
    cascade: Nullable(
      Type.Object(
        {
          low: Type.Number({ description: 'The band’s lower bound.', examples: [0.2] }),
          high: Type.Number({ description: 'The band’s upper bound.', examples: [0.8] }),
        },
        { additionalProperties: false },
      ),
      {
        description: 'A guard’s GUARD_<NAME>_CASCADE band (rules without their own use it); null: none.',
        examples: [null],
      },
    ),
  },
  { additionalProperties: false },
)

export const DetectorListSchema = Type.Object(
  {
    default: enumOf(['model', 'judge'] as const, {
      description:
        'What scores a toxicity or prompt_injection rule whose `detector` is unset: judge when a judge is configured (JUDGE_BASE_URL), else model. Name the detector in the rule to keep its scoring the same whatever the server’s configuration.',
      examples: ['model'],
    }),
    data: Type.Array(DetectorSchema, {
      description: 'model, judge, then the guard detectors granted to the workspace, by name.',
      examples: [
        [
          {
            name: 'model',
            kind: 'model',
            configured: true,
            format: null,
            rule_types: ['toxicity', 'prompt_injection'],
            cascade: null,
          },
        ],
      ],
    }),
  },
  { additionalProperties: false },
)
export type DetectorList = Static<typeof DetectorListSchema>
