import { apiKeyScopesValues } from '@warden/client'
import { useEffect, useId, useState } from 'preact/hooks'
import {
  type ApiKey,
  type ApiKeyCreated,
  answer,
  type Body,
  type FieldError,
  FormError,
  fieldErrorsOf,
  type Listed,
  storedKey,
  warden,
} from '../api'
import {
  CheckboxGroup,
  ConfirmButton,
  ErrorSummary,
  Field,
  formatTime,
  Loading,
  Notice,
  Pager,
  PageTitle,
  TableRegion,
} from '../components'

const PAGE_SIZE = 50

type Scope = (typeof apiKeyScopesValues)[number]

interface KeyDraft {
  name: string
  scopes: Scope[]
  /** A datetime-local value, or '' for a key that never expires. */
  expires: string
}

const NO_DRAFT: KeyDraft = { name: '', scopes: [], expires: '' }

/** What the form can tell before sending: the server checks the rest, and its errors show the same way. */
function checked(draft: KeyDraft): Body<'createApiKey'> {
  const errors: FieldError[] = []
  if (draft.name.trim() === '')
    errors.push({ pointer: '/name', detail: 'is required: a label to recognise the key' })
  if (draft.scopes.length === 0) errors.push({ pointer: '/scopes', detail: 'name at least one scope' })
  let expiresAt: number | null = null
  if (draft.expires !== '') {
    const ms = new Date(draft.expires).getTime()
    if (!Number.isFinite(ms)) errors.push({ pointer: '/expires_at', detail: 'is not a date and time' })
    else expiresAt = Math.floor(ms / 1000)
  }
  if (errors.length > 0) throw new FormError(errors)
  return { name: draft.name.trim(), scopes: draft.scopes, expires_at: expiresAt }
}

/** A key's state now: revoked, expired or active. */
function stateOf(key: ApiKey, now: number): 'revoked' | 'expired' | 'active' {
  if (key.revoked_at !== null) return 'revoked'
  if (key.expires_at !== null && key.expires_at <= now) return 'expired'
  return 'active'
}

/**
 * The workspace's API keys (an admin key's page): each key's label, prefix, scopes and state, a
 * form to create one, whose secret is shown once, and revocation after a confirmation.
 */
export function ApiKeysPage() {
  const [cursors, setCursors] = useState<(string | null)[]>([null])
  const [page, setPage] = useState<Listed<'listApiKeys'> | null>(null)
  const [loadError, setLoadError] = useState<unknown>(null)
  const [revokeError, setRevokeError] = useState<unknown>(null)
  const [reload, setReload] = useState(0)
  const cursor = cursors[cursors.length - 1] ?? null

  useEffect(() => {
    let live = true
    setLoadError(null)
    answer(
      warden.GET('/v1/api-keys', { params: { query: { limit: PAGE_SIZE, cursor: cursor ?? undefined } } }),
    )
      .then((listed) => live && setPage(listed.data))
      .catch((error) => live && setLoadError(error))
    return () => {
      live = false
    }
  }, [cursor, reload])

  const revoke = async (key: ApiKey) => {
    setRevokeError(null)
    try {
      await answer(warden.DELETE('/v1/api-keys/{key_id}', { params: { path: { key_id: key.id } } }))
      setReload((n) => n + 1)
    } catch (error) {
      setRevokeError(error)
    }
  }

  return (
    <section>
      <PageTitle>API keys</PageTitle>
      <p class="subtitle">
        The keys of this workspace, revoked ones included. Managing keys needs an admin key. A key's secret is
        shown once, when it is created: Warden keeps only its hash.
      </p>
      <NewKey onCreated={() => setReload((n) => n + 1)} />
      <h2>Keys</h2>
      <ErrorSummary error={loadError ?? revokeError} />
      {!page && !loadError && <Loading what="Loading keys" />}
      {page && page.data.length === 0 && cursors.length === 1 && (
        <p class="empty">No keys in this workspace.</p>
      )}
      {page && page.data.length > 0 && <KeyTable keys={page.data} onRevoke={revoke} />}
      <Pager label="Pages of keys" cursors={cursors} setCursors={setCursors} nextCursor={page?.next_cursor} />
    </section>
  )
}

/** The form for a new key, and the new key's secret, shown once, until it is dismissed. */
function NewKey({ onCreated }: { onCreated: () => void }) {
  const [draft, setDraft] = useState<KeyDraft>(NO_DRAFT)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [created, setCreated] = useState<ApiKeyCreated | null>(null)
  const ids = useId()

  const create = async () => {
    setError(null)
    setCreated(null)
    let body: Body<'createApiKey'>
    try {
      body = checked(draft)
    } catch (invalid) {
      setError(invalid)
      return
    }
    setBusy(true)
    try {
      const made = await answer(warden.POST('/v1/api-keys', { body }))
      setCreated(made.data)
      setDraft(NO_DRAFT)
      onCreated()
    } catch (refused) {
      setError(refused)
    } finally {
      setBusy(false)
    }
  }

  const errors = fieldErrorsOf(error)
  return (
    <section aria-labelledby={`${ids}-new`} class="card">
      <h2 id={`${ids}-new`}>New key</h2>
      <ErrorSummary error={error} />
      <form
        class="form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault()
          void create()
        }}
      >
        <div class="grid two">
          <Field label="Name" pointer="/name" errors={errors} required hint="A label to recognise the key.">
            {(c) => (
              <input
                {...c}
                value={draft.name}
                autoComplete="off"
                onInput={(event) => {
                  const name = event.currentTarget.value
                  setDraft((d) => ({ ...d, name }))
                }}
              />
            )}
          </Field>
          <Field
            label="Expires (optional)"
            pointer="/expires_at"
            errors={errors}
            hint="Left empty, the key never expires."
          >
            {(c) => (
              <input
                {...c}
                type="datetime-local"
                value={draft.expires}
                onInput={(event) => {
                  const expires = event.currentTarget.value
                  setDraft((d) => ({ ...d, expires }))
                }}
              />
            )}
          </Field>
        </div>
        <CheckboxGroup
          legend="Scopes"
          pointer="/scopes"
          errors={errors}
          options={apiKeyScopesValues}
          selected={draft.scopes}
          hint="What the key may do; admin implies every other scope. An application's runtime key needs only evaluations:write."
          onChange={(scopes) => setDraft((d) => ({ ...d, scopes: scopes as Scope[] }))}
        />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create key'}
          </button>
        </div>
      </form>
      {created && <CreatedKey created={created} onDone={() => setCreated(null)} />}
    </section>
  )
}

/** A new key's secret, the only time it is shown. */
function CreatedKey({ created, onDone }: { created: ApiKeyCreated; onDone: () => void }) {
  return (
    <Notice kind="success">
      <p class="alert-title">
        Key “{created.name}” created. Copy its secret now: it is shown only this once.
      </p>
      <Field label="Secret" pointer="/key" errors={[]}>
        {(c) => (
          <input
            {...c}
            class="secret"
            readOnly
            value={created.key}
            onFocus={(event) => event.currentTarget.select()}
          />
        )}
      </Field>
      <p>
        Send it as <code>Authorization: Bearer &lt;secret&gt;</code>.
      </p>
      <div class="actions">
        <button type="button" onClick={onDone}>
          Done, I have stored it
        </button>
      </div>
    </Notice>
  )
}

/** A page of keys, each with its state and, unless revoked, a button to revoke it. */
function KeyTable({ keys, onRevoke }: { keys: readonly ApiKey[]; onRevoke: (key: ApiKey) => Promise<void> }) {
  const now = Math.floor(Date.now() / 1000)
  // The key this tab is signed in with, recognised by its prefix: revoking it signs the tab out.
  const signedInWith = storedKey() ?? ''
  return (
    <TableRegion label="API keys">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Scopes</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col">State</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => {
            const state = stateOf(key, now)
            const mine = signedInWith.startsWith(key.prefix) && state === 'active'
            const label = key.name ?? key.prefix
            return (
              <tr key={key.id} data-key-id={key.id}>
                <td>
                  {key.name ?? '—'}
                  {mine && <span class="hint"> (this tab's key)</span>}
                </td>
                <td>
                  <code>{key.prefix}…</code>
                </td>
                <td class="scopes">{key.scopes.join(', ')}</td>
                <td>{formatTime(key.created)}</td>
                <td>{key.expires_at === null ? 'never' : formatTime(key.expires_at)}</td>
                <td class="state">{state}</td>
                <td>
                  {state !== 'revoked' && (
                    <ConfirmButton
                      label="Revoke"
                      ariaLabel={`Revoke key ${label}`}
                      title={`Revoke key ${label}?`}
                      message={
                        <p>
                          The key stops working on its next request, for every client that uses it. This
                          cannot be undone.
                          {mine && ' It is the key this tab is signed in with: the console signs out.'}
                        </p>
                      }
                      confirmLabel="Revoke key"
                      onConfirm={() => onRevoke(key)}
                    />
                  )}
                </td>
              </tr>
            )
          })}
        </tbody>
      </table>
    </TableRegion>
  )
}
