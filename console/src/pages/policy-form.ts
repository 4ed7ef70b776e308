// The editable form of a policy and the request body built from it.
import { ruleTypeForms } from '@warden/client'
import type { Body, FieldError, Policy, PolicyRule, RuleType, Target } from '../api'

/** A policy as a create sends it (the playground's draft policies have the same shape). */
export type PolicyBody = Body<'createPolicy'>
type RuleBody = PolicyBody['rules'][number]

export interface RuleDraft {
  /** A stable key for the list while rules are added, removed and moved. */
  key: number
  type: RuleType
  expected: PolicyRule['expected']
  value: string
  threshold: string
  /** pii kinds or toxicity categories; empty is sent as null (all kinds; for toxicity, the model's general score). */
  selected: string[]
  /** keywords: one phrase a line. */
  phrases: string
  /** toxicity, prompt_injection and custom: what scores the rule (model, judge or a guard detector); empty leaves it unset. */
  detector: string
  /** pii, keywords and regex: what a finding does, `block` or `mask`; empty leaves it unset (block). */
  action: '' | NonNullable<PolicyRule['action']>
  /** Mask rules: whether the guarded proxies put the masked values back into the reply (unset means yes). */
  restore: boolean | null
  /** The values that never count (or, for toxicity and prompt_injection, read as neutral text): one a line. */
  allowed: string
  /** The rule as loaded, so fields this type does not use are sent back as they were. */
  original: PolicyRule | null
}

export interface PolicyDraft {
  id: string
  target: Target[]
  mode: Policy['mode']
  on_error: Policy['on_error']
  definition: string
  override_response: string
  rules: RuleDraft[]
}

let nextKey = 1

/**
 * Which of value, threshold, flagged and detector each rule type reads, with the labels of its
 * fields and what it passes on: each rule type's module says so (src/rules/rule-types/), the API
 * publishes it as its OpenAPI document's `x-rule-types`, and the typed client carries it as
 * `ruleTypeForms` (docs/rule-types.md).
 */
export const RULE_FIELDS: Record<
  RuleType,
  {
    value?: string
    threshold?: string
    flagged?: 'pii' | 'toxicity' | 'phrases'
    /** The rule may name what scores it: the offline model, the judge or a guard detector. */
    detector?: true
    /** The rule may mask its findings instead of failing (`action: mask`). */
    mask?: true
    /** What its `allowed` values do: findings that never count, or text read as neutral. */
    allowed?: 'findings' | 'text'
    about: string
  }
> = ruleTypeForms

export function ruleDraft(rule: PolicyRule | null, type: RuleType = 'pii'): RuleDraft {
  const fields = RULE_FIELDS[rule?.type ?? type]
  return {
    key: nextKey++,
    type: rule?.type ?? type,
    expected: rule?.expected ?? 'pass',
    value: rule?.value ?? '',
    threshold: rule?.threshold === null || rule?.threshold === undefined ? '' : String(rule.threshold),
    selected: fields.flagged === 'pii' || fields.flagged === 'toxicity' ? (rule?.flagged ?? []) : [],
    phrases: fields.flagged === 'phrases' ? (rule?.flagged ?? []).join('\n') : '',
    detector: fields.detector ? (rule?.detector ?? '') : '',
    action: fields.mask ? (rule?.action ?? '') : '',
    restore: fields.mask ? (rule?.restore ?? null) : null,
    allowed: fields.allowed ? (rule?.allowed ?? []).join('\n') : '',
    original: rule,
  }
}

export function policyDraft(policy: Policy | null): PolicyDraft {
  return {
    id: policy?.id ?? '',
    target: policy?.target ?? ['input', 'output'],
    mode: policy?.mode ?? 'enforce',
    on_error: policy?.on_error ?? 'fail_closed',
    definition: policy?.definition ?? '',
    override_response: policy?.override_response ?? '',
    rules: policy ? policy.rules.map((r) => ruleDraft(r)) : [ruleDraft(null)],
  }
}

/**
 * A number when the text is one; otherwise the text itself, so the server names the problem at
 * its field. The body's type says number: a text that is not one is sent as typed, on purpose.
 */
function numberOrText(text: string): number | null {
  const t = text.trim()
  if (t === '') return null
  const n = Number(t)
  return Number.isFinite(n) ? n : (t as unknown as number)
}

function ruleBody(rule: RuleDraft): RuleBody {
  const fields = RULE_FIELDS[rule.type]
  const kept = rule.original && rule.original.type === rule.type ? rule.original : null
  let flagged: string[] | null = kept?.flagged ?? null
  if (fields.flagged === 'phrases') {
    const phrases = lines(rule.phrases)
    flagged = phrases.length ? phrases : null
  } else if (fields.flagged) {
    flagged = rule.selected.length ? rule.selected : null
  }
  const allowed = lines(rule.allowed)
  return {
    type: rule.type,
    expected: rule.expected,
    value: fields.value ? (rule.value === '' ? null : rule.value) : (kept?.value ?? null),
    threshold: fields.threshold ? numberOrText(rule.threshold) : (kept?.threshold ?? null),
    flagged,
    // Sent only when set, as the API returns it: other rule types refuse the field.
    ...(fields.detector && rule.detector !== '' ? { detector: rule.detector } : {}),
    // A cascade (set through the API) is kept while the rule names the same guard.
    ...(kept?.cascade && fields.detector && rule.detector === kept.detector ? { cascade: kept.cascade } : {}),
    // action, restore and allowed too are sent only when set: other rule types refuse them, and
    // restore means something only on a mask rule.
    ...(fields.mask && rule.action !== '' ? { action: rule.action } : {}),
    ...(fields.mask && rule.action === 'mask' && rule.restore !== null ? { restore: rule.restore } : {}),
    ...(fields.allowed && allowed.length > 0 ? { allowed } : {}),
  }
}

/** The lines of a list typed one item a line, blank lines left out. */
export function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '')
}

/** The body of a create (with the id) or of a merge patch (the editable fields, all of them). */
export function policyBody(draft: PolicyDraft, create: true): PolicyBody
export function policyBody(draft: PolicyDraft, create: false): Body<'updatePolicy'>
export function policyBody(draft: PolicyDraft, create: boolean): PolicyBody | Body<'updatePolicy'>
export function policyBody(draft: PolicyDraft, create: boolean): PolicyBody | Body<'updatePolicy'> {
  const body = {
    rules: draft.rules.map(ruleBody),
    target: draft.target,
    definition: draft.definition === '' ? null : draft.definition,
    override_response: draft.override_response === '' ? null : draft.override_response,
    mode: draft.mode,
    on_error: draft.on_error,
  }
  return create ? { id: draft.id.trim(), ...body } : body
}

/**
 * The form's own check before a policy is sent: it needs an id (an empty one would only come back
 * as the API's pointer error). The API still checks everything, the id's characters included.
 */
export function missingId(draft: PolicyDraft, prefix: string): FieldError[] {
  return draft.id.trim() === ''
    ? [{ pointer: `${prefix}/id`, detail: 'is required: give the policy an id' }]
    : []
}
