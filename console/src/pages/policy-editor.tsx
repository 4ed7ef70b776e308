import { useEffect, useState } from 'preact/hooks'
import { ApiError, answer, FormError, fieldErrorsOf, type Policy, warden } from '../api'
import { ConfirmButton, ErrorSummary, formatTime, Loading, Notice, PageTitle } from '../components'
import { Link, navigate, useLocation } from '../router'
import { PolicyFields } from './policy-fields'
import { missingId, type PolicyDraft, policyBody, policyDraft } from './policy-form'

/**
 * Create a policy (policyId null) or edit one. Saving sends If-Match with the ETag the page read,
 * so a change someone made in the meantime is never overwritten unseen: the server answers 412
 * and the page says so, keeping the edits.
 */
export function PolicyEditorPage({ appId, policyId }: { appId: string; policyId: string | null }) {
  const create = policyId === null
  const location = useLocation()
  const at = policyId === null ? null : { application_id: appId, policy_id: policyId }
  const read = (path: { application_id: string; policy_id: string }) =>
    answer(warden.GET('/v1/applications/{application_id}/policies/{policy_id}', { params: { path } }))
  const [policy, setPolicy] = useState<Policy | null>(null)
  const [etag, setEtag] = useState<string | null>(null)
  const [draft, setDraft] = useState<PolicyDraft | null>(create ? policyDraft(null) : null)
  const [loadError, setLoadError] = useState<unknown>(null)
  const [saveError, setSaveError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [notice, setNotice] = useState<string | null>(
    location.query.get('created') ? 'Policy created as revision 1.' : null,
  )

  const load = async () => {
    if (!at) return
    setLoadError(null)
    try {
      const got = await read(at)
      setPolicy(got.data)
      setEtag(got.etag)
      setDraft(policyDraft(got.data))
    } catch (error) {
      setLoadError(error)
    }
  }

  useEffect(() => {
    void load()
  }, [appId, policyId])

  const save = async (options: { skipTests?: boolean; overwrite?: boolean } = {}) => {
    if (!draft) return
    setNotice(null)
    const missing = create ? missingId(draft, '') : []
    if (missing.length > 0) {
      setSaveError(new FormError(missing))
      return
    }
    setBusy(true)
    setSaveError(null)
    try {
      if (!at) {
        const created = await answer(
          warden.POST('/v1/applications/{application_id}/policies', {
            params: { path: { application_id: appId } },
            body: policyBody(draft, true),
          }),
        )
        navigate(
          `/applications/${encodeURIComponent(appId)}/policies/${encodeURIComponent(created.data.id)}?created=1`,
          {
            replace: true,
          },
        )
        return
      }
      let ifMatch = etag
      if (options.overwrite) {
        // The user chose to replace the other change: read the current ETag, then save over it.
        ifMatch = (await read(at)).etag
      }
      const saved = await answer(
        warden.PATCH('/v1/applications/{application_id}/policies/{policy_id}', {
          params: {
            path: at,
            header: { 'if-match': ifMatch ?? undefined },
            query: options.skipTests ? { skip_tests: true } : {},
          },
          body: policyBody(draft, false),
        }),
      )
      setPolicy(saved.data)
      setEtag(saved.etag)
      setDraft(policyDraft(saved.data))
      setNotice(`Saved as revision ${saved.data.revision}.`)
    } catch (error) {
      setSaveError(error)
    } finally {
      setBusy(false)
    }
  }

  if (loadError) {
    return (
      <section>
        <PageTitle>Policy {policyId}</PageTitle>
        <ErrorSummary error={loadError} />
        <Link to={`/applications/${encodeURIComponent(appId)}`}>Back to the application</Link>
      </section>
    )
  }
  if (!draft) return <Loading what="Loading the policy" />

  const stale = saveError instanceof ApiError && saveError.status === 412
  const testsFailed =
    saveError instanceof ApiError && saveError.status === 409 && saveError.code === 'tests_failed'
  const appLink = `/applications/${encodeURIComponent(appId)}`
  const policyLink = policyId ? `${appLink}/policies/${encodeURIComponent(policyId)}` : appLink

  return (
    <section>
      <nav class="breadcrumbs" aria-label="Breadcrumbs">
        <Link to={appLink}>{appId}</Link> <span aria-hidden="true">›</span> policies
      </nav>
      <div class="title-row">
        <PageTitle>{create ? 'New policy' : `Policy ${policyId}`}</PageTitle>
        {policy && (
          <div class="actions">
            <Link class="button" to={`${policyLink}/revisions`}>
              Revisions
            </Link>
            <Link class="button" to={`${policyLink}/tests`}>
              Tests
            </Link>
            <Link class="button" to={`${appLink}/playground?policy=${encodeURIComponent(policy.id)}`}>
              Try in the playground
            </Link>
          </div>
        )}
      </div>
      {policy && (
        <p class="subtitle">
          Revision {policy.revision} · updated {formatTime(policy.updated)}
        </p>
      )}
      {notice && <Notice kind="success">{notice}</Notice>}
      {stale ? (
        <div class="alert error stale" role="alert">
          <p class="alert-title">Someone else changed this policy since you opened it.</p>
          <p>
            Your edits were not saved and are still below. Load the latest version to see their change (your
            edits are discarded), or save yours over it.
          </p>
          <div class="actions">
            <button
              type="button"
              onClick={() => {
                setSaveError(null)
                void load()
              }}
            >
              Load the latest version
            </button>
            <button
              type="button"
              class="danger"
              disabled={busy}
              onClick={() => void save({ overwrite: true })}
            >
              Save mine over it
            </button>
          </div>
        </div>
      ) : (
        <ErrorSummary error={saveError}>
          {testsFailed && (
            <>
              <p>This policy has tests, and the change makes some of them fail:</p>
              <ul>
                {((saveError as ApiError).problem.failures ?? []).slice(0, 10).map((f) => (
                  <li key={f.test_id}>
                    <code>{f.test_id}</code>: expected {f.expected.verdict}, got {f.actual.verdict}
                  </li>
                ))}
              </ul>
              <button
                type="button"
                class="danger"
                disabled={busy}
                onClick={() => void save({ skipTests: true })}
              >
                Save without running the tests
              </button>
            </>
          )}
        </ErrorSummary>
      )}
      <form
        class="form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault()
          void save()
        }}
      >
        <PolicyFields
          draft={draft}
          onChange={setDraft}
          errors={fieldErrorsOf(saveError)}
          prefix=""
          withId={create}
        />
        <details class="json-preview">
          <summary>Request body</summary>
          <pre>{JSON.stringify(policyBody(draft, create), null, 2)}</pre>
        </details>
        <div class="actions form-actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Saving…' : create ? 'Create policy' : 'Save policy'}
          </button>
          {policy && at && (
            <ConfirmButton
              label="Delete policy"
              title={`Delete policy ${policy.id}?`}
              message={<p>The policy, its history and its tests are deleted. This cannot be undone.</p>}
              confirmLabel="Delete for good"
              onConfirm={async () => {
                try {
                  await answer(
                    warden.DELETE('/v1/applications/{application_id}/policies/{policy_id}', {
                      params: { path: at, header: { 'if-match': etag ?? undefined } },
                    }),
                  )
                  navigate(appLink)
                } catch (error) {
                  setSaveError(error)
                }
              }}
            />
          )}
        </div>
      </form>
    </section>
  )
}
