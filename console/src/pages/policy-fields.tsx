import {
  piiKindValues,
  policyModeValues,
  policyOnErrorValues,
  policyRuleActionValues,
  policyRuleExpectedValues,
  policyRuleTypeValues,
  policyTargetValues,
  toxicityCategoryValues,
} from '@warden/client'
import type { FieldError, RuleType, Target } from '../api'
import { CheckboxGroup, Field } from '../components'
import { detectorsFor, unsetMeans, useDetectors } from './detectors'
import { type PolicyDraft, RULE_FIELDS, type RuleDraft, ruleDraft } from './policy-form'

/**
 * What choosing toxicity categories does, as the API does it (docs/evaluation.md, `method`): none
 * is not the same as all six for the offline model.
 */
/** What each choice of a rule's `action` does (docs/masking.md). */
const ACTION_HINT =
  'block: a finding fails the rule. mask: each finding is replaced by a placeholder ([EMAIL_1]) and the conversation goes on.'

/** What a rule's allowed values do, by what its type does with them. */
const ALLOWED_HINT = {
  findings:
    'A finding whose text is one of these (any case) does not count: your support address, your test card.',
  text: 'Each occurrence (any case) is read as neutral text before scoring: the wording of your own prompt template.',
} as const

const TOXICITY_HINT =
  'None chosen: the offline model scores toxicity in general, and the judge rates all six categories. Chosen: the rule scores the highest of them (the model rates hate and harassment, a word list the others).'

/**
 * Every field of a policy, each showing the API's errors for its pointer. `prefix` is where the
 * policy sits in the request body: "" for a create or a patch, "/draft_policies/0" in the
 * playground.
 */
export function PolicyFields(props: {
  draft: PolicyDraft
  onChange: (draft: PolicyDraft) => void
  errors: readonly FieldError[]
  prefix: string
  /** Show the id field (a create, or a draft). */
  withId: boolean
}) {
  const { draft, errors, prefix } = props
  const update = (patch: Partial<PolicyDraft>) => props.onChange({ ...draft, ...patch })
  const updateRule = (index: number, patch: Partial<RuleDraft>) =>
    update({ rules: draft.rules.map((r, i) => (i === index ? { ...r, ...patch } : r)) })
  const move = (index: number, by: number) => {
    const rules = [...draft.rules]
    const [rule] = rules.splice(index, 1)
    if (rule) rules.splice(index + by, 0, rule)
    update({ rules })
  }

  return (
    <div class="policy-fields">
      <div class="grid three">
        {props.withId && (
          <Field
            label="Policy id"
            pointer={`${prefix}/id`}
            errors={errors}
            hint="Letters, digits, - _ . ~"
            required
          >
            {(c) => (
              <input
                {...c}
                value={draft.id}
                autoComplete="off"
                onInput={(e) => update({ id: e.currentTarget.value })}
              />
            )}
          </Field>
        )}
        <Field
          label="Mode"
          pointer={`${prefix}/mode`}
          errors={errors}
          hint="Monitor: evaluated and reported, never decides."
        >
          {(c) => (
            <select
              {...c}
              value={draft.mode}
              onChange={(e) => update({ mode: e.currentTarget.value as PolicyDraft['mode'] })}
            >
              {policyModeValues.map((mode) => (
                <option key={mode} value={mode}>
                  {mode}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label="When a rule cannot be evaluated"
          pointer={`${prefix}/on_error`}
          errors={errors}
          hint="fail_closed counts it as a failure."
        >
          {(c) => (
            <select
              {...c}
              value={draft.on_error}
              onChange={(e) => update({ on_error: e.currentTarget.value as PolicyDraft['on_error'] })}
            >
              {policyOnErrorValues.map((value) => (
                <option key={value} value={value}>
                  {value}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <CheckboxGroup
        legend="Targets: the parts of the conversation the rules read"
        pointer={`${prefix}/target`}
        errors={errors}
        options={policyTargetValues}
        selected={draft.target}
        onChange={(selected) => update({ target: selected as Target[] })}
      />
      <Field
        label="Definition"
        pointer={`${prefix}/definition`}
        errors={errors}
        hint="What the policy means, in words; custom rules need it."
      >
        {(c) => (
          <textarea
            {...c}
            rows={2}
            value={draft.definition}
            onInput={(e) => update({ definition: e.currentTarget.value })}
          />
        )}
      </Field>
      <Field
        label="Override response"
        pointer={`${prefix}/override_response`}
        errors={errors}
        hint="Sent instead of the model's reply when this policy fails; empty means block."
      >
        {(c) => (
          <textarea
            {...c}
            rows={2}
            value={draft.override_response}
            onInput={(e) => update({ override_response: e.currentTarget.value })}
          />
        )}
      </Field>

      <fieldset class="rules" data-pointer={`${prefix}/rules`}>
        <legend>Rules</legend>
        {errors
          .filter((e) => e.pointer === `${prefix}/rules`)
          .map((e) => (
            <p class="field-error" key={e.detail} data-error-for={`${prefix}/rules`}>
              {e.detail}
            </p>
          ))}
        <ol class="rule-list">
          {draft.rules.map((rule, index) => (
            <li key={rule.key} class="rule card">
              <RuleFields
                rule={rule}
                index={index}
                count={draft.rules.length}
                prefix={`${prefix}/rules/${index}`}
                errors={errors}
                onChange={(patch) => updateRule(index, patch)}
                onRemove={() => update({ rules: draft.rules.filter((_, i) => i !== index) })}
                onMove={(by) => move(index, by)}
              />
            </li>
          ))}
        </ol>
        <button type="button" onClick={() => update({ rules: [...draft.rules, ruleDraft(null)] })}>
          Add a rule
        </button>
      </fieldset>
    </div>
  )
}

function RuleFields(props: {
  rule: RuleDraft
  index: number
  count: number
  prefix: string
  errors: readonly FieldError[]
  onChange: (patch: Partial<RuleDraft>) => void
  onRemove: () => void
  onMove: (by: number) => void
}) {
  const { rule, prefix, errors, index } = props
  const fields = RULE_FIELDS[rule.type]
  const detectors = useDetectors()
  // What the server offers this type, and the rule's own value even when it no longer does.
  const offered = detectorsFor(detectors, rule.type)
  const choices =
    rule.detector === '' || offered.some((d) => d.name === rule.detector)
      ? offered
      : [...offered, unlisted(rule.detector, rule.type)]
  // Rules are numbered as the API numbers them: from 0, as in /rules/0 and a result's index.
  const n = index
  const unplaced = errors.filter(
    (e) =>
      (e.pointer === prefix || e.pointer.startsWith(`${prefix}/`)) &&
      !['type', 'expected', 'value', 'threshold', 'flagged', 'detector', 'action', 'restore', 'allowed'].some(
        (f) => e.pointer === `${prefix}/${f}` || e.pointer.startsWith(`${prefix}/${f}/`),
      ),
  )
  return (
    <>
      <div class="rule-head">
        <h3>Rule {n}</h3>
        <div class="actions">
          <button
            type="button"
            disabled={index === 0}
            onClick={() => props.onMove(-1)}
            aria-label={`Move rule ${n} up`}
          >
            Up
          </button>
          <button
            type="button"
            disabled={index === props.count - 1}
            onClick={() => props.onMove(1)}
            aria-label={`Move rule ${n} down`}
          >
            Down
          </button>
          <button type="button" class="danger" onClick={props.onRemove} aria-label={`Remove rule ${n}`}>
            Remove
          </button>
        </div>
      </div>
      {unplaced.map((e) => (
        <p class="field-error" key={e.pointer + e.detail} data-error-for={e.pointer}>
          {e.detail}
        </p>
      ))}
      <div class="grid three">
        <Field label={`Rule ${n} type`} pointer={`${prefix}/type`} errors={errors} hint={fields.about}>
          {(c) => (
            <select
              {...c}
              value={rule.type}
              onChange={(e) => {
                const type = e.currentTarget.value as RuleType
                const next = RULE_FIELDS[type]
                props.onChange({
                  type,
                  selected: next.flagged === RULE_FIELDS[rule.type].flagged ? rule.selected : [],
                  detector: next.detector ? rule.detector : '',
                  action: next.mask ? rule.action : '',
                  restore: next.mask ? rule.restore : null,
                  allowed: next.allowed ? rule.allowed : '',
                })
              }}
            >
              {policyRuleTypeValues.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label={`Rule ${n} expected verdict`}
          pointer={`${prefix}/expected`}
          errors={errors}
          hint="pass: the rule must pass."
        >
          {(c) => (
            <select
              {...c}
              value={rule.expected}
              onChange={(e) => props.onChange({ expected: e.currentTarget.value as RuleDraft['expected'] })}
            >
              {policyRuleExpectedValues.map((value) => (
                <option key={value} value={value}>
                  {value}
                </option>
              ))}
            </select>
          )}
        </Field>
        {fields.mask && (
          <Field label={`Rule ${n} action`} pointer={`${prefix}/action`} errors={errors} hint={ACTION_HINT}>
            {(c) => (
              <select
                {...c}
                value={rule.action === '' ? 'block' : rule.action}
                onChange={(e) => {
                  const action = e.currentTarget.value as RuleDraft['action']
                  // Back to block leaves the field unset, as it was, unless the rule said block.
                  props.onChange({
                    action: action === 'block' && rule.original?.action !== 'block' ? '' : action,
                  })
                }}
              >
                {policyRuleActionValues.map((value) => (
                  <option key={value} value={value}>
                    {value}
                  </option>
                ))}
              </select>
            )}
          </Field>
        )}
        {fields.mask && rule.action === 'mask' && (
          <Field
            label={`Rule ${n} restore`}
            pointer={`${prefix}/restore`}
            errors={errors}
            hint="Whether the guarded proxies put the masked values back into the model's reply."
          >
            {(c) => (
              <select
                {...c}
                value={rule.restore === false ? 'false' : 'true'}
                onChange={(e) => {
                  const restore = e.currentTarget.value === 'true'
                  // Yes is the default: sent only when the rule said so before.
                  props.onChange({
                    restore: restore && rule.original?.restore !== true ? null : restore,
                  })
                }}
              >
                <option value="true">yes: the reply gets the values back</option>
                <option value="false">no: the reply keeps the placeholders</option>
              </select>
            )}
          </Field>
        )}
        {fields.value && (
          <Field
            label={`Rule ${n} ${fields.value.toLowerCase()}`}
            pointer={`${prefix}/value`}
            errors={errors}
          >
            {(c) => (
              <input
                {...c}
                class={rule.type === 'regex' ? 'mono' : undefined}
                value={rule.value}
                autoComplete="off"
                spellcheck={false}
                inputMode={rule.type === 'length' ? 'numeric' : undefined}
                onInput={(e) => props.onChange({ value: e.currentTarget.value })}
              />
            )}
          </Field>
        )}
        {fields.threshold && (
          <Field
            label={`Rule ${n} ${fields.threshold.toLowerCase()}`}
            pointer={`${prefix}/threshold`}
            errors={errors}
          >
            {(c) => (
              <input
                {...c}
                inputMode="decimal"
                value={rule.threshold}
                onInput={(e) => props.onChange({ threshold: e.currentTarget.value })}
              />
            )}
          </Field>
        )}
        {fields.detector && (
          <Field
            label={`Rule ${n} detector`}
            pointer={`${prefix}/detector`}
            errors={errors}
            hint={unsetMeans(detectors, rule.type)}
          >
            {(c) => (
              <select
                {...c}
                value={rule.detector}
                onChange={(e) => props.onChange({ detector: e.currentTarget.value })}
              >
                <option value="">
                  {rule.type === 'custom'
                    ? 'unset (judge)'
                    : `unset (${detectors?.default ?? 'server default'})`}
                </option>
                {choices.map((d) => (
                  <option key={d.name} value={d.name}>
                    {d.kind === 'guard'
                      ? `${d.name} (guard, ${d.format})`
                      : d.configured
                        ? d.name
                        : `${d.name} (not configured)`}
                  </option>
                ))}
              </select>
            )}
          </Field>
        )}
      </div>
      {fields.flagged === 'phrases' && (
        <Field
          label={`Rule ${n} phrases, one a line`}
          pointer={`${prefix}/flagged`}
          errors={errors}
          nested
          hint="At least one phrase."
        >
          {(c) => (
            <textarea
              {...c}
              rows={3}
              value={rule.phrases}
              onInput={(e) => props.onChange({ phrases: e.currentTarget.value })}
            />
          )}
        </Field>
      )}
      {(fields.flagged === 'pii' || fields.flagged === 'toxicity') && (
        <CheckboxGroup
          legend={`Rule ${n} ${fields.flagged === 'pii' ? 'kinds of personal data' : 'categories'}`}
          hint={fields.flagged === 'pii' ? 'None chosen means all.' : TOXICITY_HINT}
          pointer={`${prefix}/flagged`}
          errors={errors}
          options={fields.flagged === 'pii' ? piiKindValues : toxicityCategoryValues}
          selected={rule.selected}
          onChange={(selected) => props.onChange({ selected })}
        />
      )}
      {fields.allowed && (
        <Field
          label={`Rule ${n} allowed values, one a line`}
          pointer={`${prefix}/allowed`}
          errors={errors}
          nested
          hint={ALLOWED_HINT[fields.allowed]}
        >
          {(c) => (
            <textarea
              {...c}
              rows={2}
              value={rule.allowed}
              spellcheck={false}
              onInput={(e) => props.onChange({ allowed: e.currentTarget.value })}
            />
          )}
        </Field>
      )}
    </>
  )
}

/** A detector the rule names that the server does not list (yet, or any more): shown as it is. */
function unlisted(name: string, type: RuleType) {
  const builtIn = name === 'model' || name === 'judge'
  return {
    name,
    kind: builtIn ? (name as 'model' | 'judge') : ('guard' as const),
    configured: builtIn,
    format: builtIn ? null : 'not available here',
    rule_types: [type],
    cascade: null,
  }
}
