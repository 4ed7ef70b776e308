// Building blocks shared by the pages: labelled fields that show the API's errors at the field
// they name, an error summary, a confirmation dialog, page controls and small status displays.
import type { ComponentChildren } from 'preact'
import { useEffect, useId, useRef, useState } from 'preact/hooks'
import { ApiError, describe, type FieldError, FormError, fieldErrorsOf } from './api'
import { hasNavigated } from './router'

/** The errors of a 422 whose pointer names this field (or, with `prefix`, anything beneath it). */
export function errorsAt(errors: readonly FieldError[], pointer: string, prefix = false): FieldError[] {
  return errors.filter((e) => e.pointer === pointer || (prefix && e.pointer.startsWith(`${pointer}/`)))
}

/**
 * A field's errors until the user changes it: editing the field answers its errors, so they leave
 * the field (the summary at the top keeps what the server said until the next submit, which
 * brings new errors). `dismiss` goes on the field's wrapper, where input and change events bubble
 * up from any control inside.
 */
function useFieldErrors(errors: readonly FieldError[], pointer: string, nested = false) {
  const [answered, setAnswered] = useState<readonly FieldError[]>([])
  const all = errorsAt(errors, pointer, nested)
  const shown = all.filter((e) => !answered.includes(e))
  const dismiss = () => {
    if (shown.length > 0) setAnswered(all)
  }
  return { shown, dismiss }
}

export interface ControlProps {
  id: string
  required?: boolean
  'aria-invalid': boolean
  'aria-describedby'?: string
  'data-pointer': string
}

/**
 * A label, a control and, below it, the API's errors for the control's JSON pointer. The control
 * is a render function, so it can be any input, select or textarea with the ids wired up.
 */
export function Field(props: {
  label: string
  pointer: string
  errors: readonly FieldError[]
  hint?: string
  /** Also show errors under this pointer (e.g. /flagged/0 under /flagged). */
  nested?: boolean
  /** The form checks the field is filled in before sending; the label says so. */
  required?: boolean
  class?: string
  children: (control: ControlProps) => ComponentChildren
}) {
  const id = useId()
  const { shown: mine, dismiss } = useFieldErrors(props.errors, props.pointer, props.nested)
  const described = [props.hint ? `${id}-hint` : '', mine.length ? `${id}-error` : '']
    .filter(Boolean)
    .join(' ')
  const control: ControlProps = { id, 'aria-invalid': mine.length > 0, 'data-pointer': props.pointer }
  if (described) control['aria-describedby'] = described
  if (props.required) control.required = true
  return (
    <div
      class={`field${mine.length ? ' invalid' : ''}${props.class ? ` ${props.class}` : ''}`}
      onInput={dismiss}
      onChange={dismiss}
    >
      <label for={id}>
        {props.label}
        {props.required && <span class="required"> (required)</span>}
      </label>
      {props.children(control)}
      {props.hint && (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
      {mine.length > 0 && (
        <p class="field-error" id={`${id}-error`} data-error-for={props.pointer}>
          {mine.map((e) => (e.pointer === props.pointer ? e.detail : `${e.pointer}: ${e.detail}`)).join('; ')}
        </p>
      )}
    </div>
  )
}

/** A group of checkboxes (a fieldset with a legend), with the errors of its pointer. */
export function CheckboxGroup(props: {
  legend: string
  pointer: string
  errors: readonly FieldError[]
  options: readonly string[]
  selected: readonly string[]
  hint?: string
  onChange: (selected: string[]) => void
}) {
  const id = useId()
  const { shown: mine, dismiss } = useFieldErrors(props.errors, props.pointer, true)
  return (
    <fieldset
      class={`checkboxes${mine.length ? ' invalid' : ''}`}
      aria-describedby={mine.length ? `${id}-error` : undefined}
      data-pointer={props.pointer}
      onChange={dismiss}
    >
      <legend>{props.legend}</legend>
      {props.hint && <p class="hint">{props.hint}</p>}
      <div class="options">
        {props.options.map((option) => (
          <label key={option} class="check">
            <input
              type="checkbox"
              checked={props.selected.includes(option)}
              onChange={(event) => {
                const on = event.currentTarget.checked
                props.onChange(
                  on
                    ? props.options.filter((o) => o === option || props.selected.includes(o))
                    : props.selected.filter((o) => o !== option),
                )
              }}
            />
            {option}
          </label>
        ))}
      </div>
      {mine.length > 0 && (
        <p class="field-error" id={`${id}-error`} data-error-for={props.pointer}>
          {mine.map((e) => (e.pointer === props.pointer ? e.detail : `${e.pointer}: ${e.detail}`)).join('; ')}
        </p>
      )}
    </fieldset>
  )
}

/** Moves focus to the control for a JSON pointer, if the page shows one. */
function focusPointer(pointer: string): void {
  const control = document.querySelector<HTMLElement>(`[data-pointer="${CSS.escape(pointer)}"]`)
  if (!control) return
  const focusable = control.matches('input, select, textarea, button')
    ? control
    : control.querySelector<HTMLElement>('input, select, textarea, button')
  focusable?.focus()
}

/**
 * What went wrong, in one place at the top of a form: the problem's detail and every field error
 * with a button that jumps to the field (each error is also shown beside its field).
 */
export function ErrorSummary({ error, children }: { error: unknown; children?: ComponentChildren }) {
  const ref = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (error) ref.current?.focus()
  }, [error])
  if (!error) return null
  const fields = fieldErrorsOf(error)
  const title =
    error instanceof ApiError && error.status === 422
      ? 'The server did not accept this. Fix the fields marked below.'
      : error instanceof FormError
        ? error.message
        : describe(error)
  return (
    <div class="alert error" role="alert" tabIndex={-1} ref={ref}>
      <p class="alert-title">{title}</p>
      {fields.length > 0 && (
        <ul>
          {fields.map((f) => (
            <li key={`${f.pointer}:${f.detail}`}>
              <button type="button" class="link" onClick={() => focusPointer(f.pointer)}>
                <code>{f.pointer || '(body)'}</code>
              </button>{' '}
              {f.detail}
            </li>
          ))}
        </ul>
      )}
      {children}
    </div>
  )
}

export function Notice({
  kind = 'info',
  children,
}: {
  kind?: 'info' | 'success' | 'warning'
  children: ComponentChildren
}) {
  return (
    // biome-ignore lint/a11y/useSemanticElements: a status message holding blocks, which <output> may not
    <div class={`alert ${kind}`} role="status">
      {children}
    </div>
  )
}

/** The state a page shows when this server does not have the endpoint it needs yet. */
export function NotAvailable({ what }: { what: string }) {
  return (
    // biome-ignore lint/a11y/useSemanticElements: a status message holding blocks, which <output> may not
    <div class="alert warning not-available" role="status">
      <p class="alert-title">Not available on this server</p>
      <p>
        This server does not offer {what} yet (its API answered 404). Upgrade Warden to use this page; nothing
        is stored by the console itself.
      </p>
    </div>
  )
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return <output class="loading">{what}…</output>
}

/** A button that asks before doing something that cannot be undone, in a modal dialog. */
export function ConfirmButton(props: {
  label: string
  title: string
  message: ComponentChildren
  confirmLabel: string
  onConfirm: () => void | Promise<void>
  class?: string
  /** A longer name for screen readers, when the visible label leaves out what is deleted. */
  ariaLabel?: string
}) {
  const dialog = useRef<HTMLDialogElement>(null)
  const [busy, setBusy] = useState(false)
  const titleId = useId()
  return (
    <>
      <button
        type="button"
        class={props.class ?? 'danger'}
        aria-label={props.ariaLabel}
        onClick={() => dialog.current?.showModal()}
      >
        {props.label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId} class="confirm">
        <h2 id={titleId}>{props.title}</h2>
        <div>{props.message}</div>
        <div class="actions">
          <button
            type="button"
            class="danger"
            disabled={busy}
            onClick={async () => {
              setBusy(true)
              try {
                await props.onConfirm()
              } finally {
                setBusy(false)
                dialog.current?.close()
              }
            }}
          >
            {props.confirmLabel}
          </button>
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </dialog>
    </>
  )
}

export function Badge({ value }: { value: string | null | undefined }) {
  const text = value ?? '—'
  return <span class={`badge badge-${text.replace(/[^a-z_]/gi, '')}`}>{text}</span>
}

/** A wide table inside a region that scrolls sideways on narrow screens (and takes focus to do so). */
export function TableRegion({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard
    <section class="table-region" aria-label={label} tabIndex={0}>
      {children}
    </section>
  )
}

/**
 * Previous and next page controls over the cursors of the pages visited so far (the first
 * page's is null): next follows the page's `next_cursor`, previous goes back one.
 */
export function Pager(props: {
  label: string
  cursors: readonly (string | null)[]
  setCursors: (update: (cursors: (string | null)[]) => (string | null)[]) => void
  nextCursor: string | null | undefined
  previousText?: string
  nextText?: string
}) {
  const { cursors, setCursors, nextCursor } = props
  return (
    <nav class="pager" aria-label={props.label}>
      <button type="button" disabled={cursors.length === 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
        {props.previousText ?? 'Previous page'}
      </button>
      <span>Page {cursors.length}</span>
      <button
        type="button"
        disabled={!nextCursor}
        onClick={() => nextCursor && setCursors((c) => [...c, nextCursor])}
      >
        {props.nextText ?? 'Next page'}
      </button>
    </nav>
  )
}

export function formatTime(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—'
  return new Date(seconds * 1000).toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  })
}

/**
 * A page's heading. When it appears after a change of page and nothing has focus (the link
 * that led here is gone), it takes focus, so keyboard and screen reader users start at the new
 * page, even one that shows its heading only once its data has loaded. On a page load, focus
 * stays where the browser puts it, so the skip link comes first.
 */
export function PageTitle({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    const nothingFocused = document.activeElement === document.body || document.activeElement === null
    if (hasNavigated() && nothingFocused) {
      ref.current?.focus({ preventScroll: true })
    }
  }, [])
  return (
    <h1 tabIndex={-1} class="page-title" ref={ref}>
      {children}
    </h1>
  )
}
