import { useState } from 'preact/hooks'
import { ApiError, answer, forgetKey, storeKey, warden } from '../api'
import { Notice, PageTitle } from '../components'

/**
 * Sign in with an API key. The key is checked with one read of the applications list; a key that
 * lacks that scope (403) is still a valid key, and pages it cannot use say so.
 */
export function SignInPage({ reason, onSignedIn }: { reason: string | null; onSignedIn: () => void }) {
  const [key, setKey] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  const submit = async (event: Event) => {
    event.preventDefault()
    const trimmed = key.trim()
    if (!trimmed) {
      setError('Enter an API key.')
      return
    }
    setBusy(true)
    setError(null)
    storeKey(trimmed)
    try {
      await answer(warden.GET('/v1/applications', { params: { query: { limit: 1 } } }), {
        expectUnauthenticated: true,
      })
      onSignedIn()
    } catch (caught) {
      if (caught instanceof ApiError && caught.status === 403) {
        onSignedIn()
        return
      }
      forgetKey()
      setError(
        caught instanceof ApiError && caught.status === 401
          ? 'The server refused this key: it is unknown, revoked or expired.'
          : caught instanceof Error
            ? caught.message
            : String(caught),
      )
    } finally {
      setBusy(false)
    }
  }

  return (
    <section class="sign-in">
      <PageTitle>Sign in to Warden</PageTitle>
      {reason && <Notice>{reason}</Notice>}
      <form onSubmit={submit} class="card" noValidate>
        <div class={`field${error ? ' invalid' : ''}`}>
          <label for="api-key">API key</label>
          <input
            id="api-key"
            name="api-key"
            type="password"
            autoComplete="off"
            spellcheck={false}
            value={key}
            aria-invalid={error !== null}
            aria-describedby={error ? 'api-key-hint api-key-error' : 'api-key-hint'}
            onInput={(event) => setKey(event.currentTarget.value)}
          />
          <p class="hint" id="api-key-hint">
            A key starting with <code>wdn_</code>, such as the admin key the server printed on its first
            start. It is kept in this browser tab only and forgotten when you sign out or close the tab.
          </p>
          {error && (
            <p class="field-error" id="api-key-error" role="alert">
              {error}
            </p>
          )}
        </div>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </section>
  )
}
