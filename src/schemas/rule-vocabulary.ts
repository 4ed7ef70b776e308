import { Type } from '@sinclair/typebox'
import { PII_KINDS } from './policies.js'

// The values a rule's `flagged` list takes for a pii rule and for a toxicity rule, named in the
// OpenAPI document so that clients list them from it (the console's checkboxes, the typed
// client's `piiKindValues` and `toxicityCategoryValues`). `flagged` itself stays a list of strings,
// since a keywords rule's phrases are free text; src/rules/validation.ts checks these values.

/** The categories a toxicity rule judges; `flagged` limits a rule to some of them. */
export const TOXICITY_CATEGORIES = [
  'hate',
  'harassment',
  'sexual',
  'violence',
  'self_harm',
  'profanity',
] as const
export type ToxicityCategory = (typeof TOXICITY_CATEGORIES)[number]

export const PiiKindSchema = Type.Unsafe<(typeof PII_KINDS)[number]>({
  $id: 'PiiKind',
  title: 'PiiKind',
  type: 'string',
  enum: [...PII_KINDS],
  description: 'A kind of personal data a pii rule finds; the values of its `flagged` list.',
  examples: ['credit_card'],
})

export const ToxicityCategorySchema = Type.Unsafe<ToxicityCategory>({
  $id: 'ToxicityCategory',
  title: 'ToxicityCategory',
  type: 'string',
  enum: [...TOXICITY_CATEGORIES],
  description: 'A category a toxicity rule judges; the values of its `flagged` list.',
  examples: ['harassment'],
})
