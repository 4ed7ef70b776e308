import { useState } from 'preact/hooks'
import type { Application, Body, FieldError } from '../api'
import { Field } from '../components'

export interface ApplicationDraft {
  id: string
  name: string
  description: string
  provider: string
  model: string
  system_prompt: string
  temperature: string
  max_tokens: string
  top_p: string
  top_k: string
}

export function draftOf(app: Application | null): ApplicationDraft {
  const p = app?.parameters
  const text = (v: number | null | undefined) => (v === null || v === undefined ? '' : String(v))
  return {
    id: app?.id ?? '',
    name: app?.name ?? '',
    description: app?.description ?? '',
    provider: app?.provider ?? '',
    model: app?.model ?? '',
    system_prompt: p?.system_prompt ?? '',
    temperature: text(p?.temperature),
    max_tokens: text(p?.max_tokens),
    top_p: text(p?.top_p),
    top_k: text(p?.top_k),
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

/** The request body for a create (with `id`, when one is given) or a merge patch (without). */
export function bodyOf(draft: ApplicationDraft, create: true): Body<'createApplication'>
export function bodyOf(draft: ApplicationDraft, create: false): Body<'updateApplication'>
export function bodyOf(draft: ApplicationDraft, create: boolean) {
  const parameters = {
    system_prompt: draft.system_prompt === '' ? null : draft.system_prompt,
    temperature: numberOrText(draft.temperature),
    max_tokens: numberOrText(draft.max_tokens),
    top_p: numberOrText(draft.top_p),
    top_k: numberOrText(draft.top_k),
  }
  const anyParameter = Object.values(parameters).some((v) => v !== null)
  const body = {
    name: draft.name,
    description: draft.description,
    provider: draft.provider.trim() === '' ? null : draft.provider,
    model: draft.model.trim() === '' ? null : draft.model,
    parameters: anyParameter ? parameters : null,
  }
  return create && draft.id.trim() !== '' ? { ...body, id: draft.id.trim() } : body
}

export function ApplicationForm(props: {
  initial: ApplicationDraft
  create: boolean
  errors: readonly FieldError[]
  busy: boolean
  submitLabel: string
  onSubmit: (draft: ApplicationDraft) => void
  onCancel?: () => void
}) {
  const [draft, setDraft] = useState(props.initial)
  const set = (name: keyof ApplicationDraft) => (event: { currentTarget: { value: string } }) =>
    setDraft((d) => ({ ...d, [name]: event.currentTarget.value }))
  const { errors } = props
  return (
    <form
      class="card form"
      noValidate
      onSubmit={(event) => {
        event.preventDefault()
        props.onSubmit(draft)
      }}
    >
      <div class="grid two">
        {props.create && (
          <Field
            label="Id (optional)"
            pointer="/id"
            errors={errors}
            hint="Left empty, the server assigns one."
          >
            {(c) => <input {...c} value={draft.id} onInput={set('id')} autoComplete="off" />}
          </Field>
        )}
        <Field label="Name" pointer="/name" errors={errors}>
          {(c) => <input {...c} value={draft.name} onInput={set('name')} autoComplete="off" />}
        </Field>
        <Field label="Provider" pointer="/provider" errors={errors} hint="Free-form, e.g. openai.">
          {(c) => <input {...c} value={draft.provider} onInput={set('provider')} autoComplete="off" />}
        </Field>
        <Field label="Model" pointer="/model" errors={errors} hint="Free-form, e.g. gpt-4o.">
          {(c) => <input {...c} value={draft.model} onInput={set('model')} autoComplete="off" />}
        </Field>
      </div>
      <Field label="Description" pointer="/description" errors={errors}>
        {(c) => <textarea {...c} rows={2} value={draft.description} onInput={set('description')} />}
      </Field>
      <fieldset class="parameters">
        <legend>Generation parameters (optional)</legend>
        <Field label="System prompt" pointer="/parameters/system_prompt" errors={errors}>
          {(c) => <textarea {...c} rows={3} value={draft.system_prompt} onInput={set('system_prompt')} />}
        </Field>
        <div class="grid four">
          <Field label="Temperature" pointer="/parameters/temperature" errors={errors} hint="0 to 2">
            {(c) => (
              <input {...c} inputMode="decimal" value={draft.temperature} onInput={set('temperature')} />
            )}
          </Field>
          <Field label="Max tokens" pointer="/parameters/max_tokens" errors={errors}>
            {(c) => <input {...c} inputMode="numeric" value={draft.max_tokens} onInput={set('max_tokens')} />}
          </Field>
          <Field label="Top p" pointer="/parameters/top_p" errors={errors} hint="0 to 1">
            {(c) => <input {...c} inputMode="decimal" value={draft.top_p} onInput={set('top_p')} />}
          </Field>
          <Field label="Top k" pointer="/parameters/top_k" errors={errors}>
            {(c) => <input {...c} inputMode="numeric" value={draft.top_k} onInput={set('top_k')} />}
          </Field>
        </div>
      </fieldset>
      <div class="actions">
        <button type="submit" class="primary" disabled={props.busy}>
          {props.busy ? 'Saving…' : props.submitLabel}
        </button>
        {props.onCancel && (
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  )
}
