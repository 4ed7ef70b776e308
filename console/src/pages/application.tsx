import { useEffect, useState } from 'preact/hooks'
import { ApiError, type Application, answer, fieldErrorsOf, type Listed, warden } from '../api'
import {
  Badge,
  ConfirmButton,
  ErrorSummary,
  formatTime,
  Loading,
  Notice,
  Pager,
  PageTitle,
  TableRegion,
} from '../components'
import { Link, navigate } from '../router'
import { ApplicationForm, bodyOf, draftOf } from './application-form'

/** One application: its settings (edit, delete) and its policies. */
export function ApplicationPage({ appId }: { appId: string }) {
  const [app, setApp] = useState<Application | null>(null)
  const [etag, setEtag] = useState<string | null>(null)
  const [loadError, setLoadError] = useState<unknown>(null)
  const [editing, setEditing] = useState(false)
  const [saveError, setSaveError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [saved, setSaved] = useState(false)
  const at = { application_id: appId }

  useEffect(() => {
    let live = true
    setApp(null)
    setLoadError(null)
    answer(warden.GET('/v1/applications/{application_id}', { params: { path: at } }))
      .then((got) => {
        if (!live) return
        setApp(got.data)
        setEtag(got.etag)
      })
      .catch((error) => live && setLoadError(error))
    return () => {
      live = false
    }
  }, [appId])

  if (loadError) {
    return (
      <section>
        <PageTitle>Application {appId}</PageTitle>
        <ErrorSummary error={loadError} />
        <Link to="/applications">Back to the applications</Link>
      </section>
    )
  }
  if (!app) return <Loading what="Loading the application" />

  const stale = saveError instanceof ApiError && saveError.status === 412

  return (
    <section>
      <div class="title-row">
        <PageTitle>{app.name}</PageTitle>
        <div class="actions">
          {!editing && (
            <button
              type="button"
              onClick={() => {
                setEditing(true)
                setSaved(false)
              }}
            >
              Edit application
            </button>
          )}
          <ConfirmButton
            label="Delete application"
            title={`Delete ${app.name}?`}
            message={
              <p>
                The application <code>{app.id}</code>, its policies and their history are deleted. This cannot
                be undone.
              </p>
            }
            confirmLabel="Delete for good"
            onConfirm={async () => {
              try {
                await answer(
                  warden.DELETE('/v1/applications/{application_id}', {
                    params: { path: at, header: { 'if-match': etag ?? undefined } },
                  }),
                )
                navigate('/applications')
              } catch (error) {
                setSaveError(error)
              }
            }}
          />
        </div>
      </div>
      <p class="subtitle">
        <code>{app.id}</code> · {app.provider ?? 'no provider'} · {app.model ?? 'no model'} · updated{' '}
        {formatTime(app.updated)}
      </p>
      {app.description && <p>{app.description}</p>}
      {saved && <Notice kind="success">Application saved.</Notice>}
      {!editing && saveError !== null && <ErrorSummary error={saveError} />}
      {editing && (
        <section aria-labelledby="edit-application">
          <h2 id="edit-application">Edit application</h2>
          <ErrorSummary error={saveError}>
            {stale && <p>Someone changed this application after you opened it. Reload the page to see it.</p>}
          </ErrorSummary>
          <ApplicationForm
            initial={draftOf(app)}
            create={false}
            errors={fieldErrorsOf(saveError)}
            busy={busy}
            submitLabel="Save application"
            onCancel={() => {
              setEditing(false)
              setSaveError(null)
            }}
            onSubmit={async (draft) => {
              setBusy(true)
              setSaveError(null)
              try {
                const saved = await answer(
                  warden.PATCH('/v1/applications/{application_id}', {
                    params: { path: at, header: { 'if-match': etag ?? undefined } },
                    body: bodyOf(draft, false),
                  }),
                )
                setApp(saved.data)
                setEtag(saved.etag)
                setEditing(false)
                setSaved(true)
              } catch (error) {
                setSaveError(error)
              } finally {
                setBusy(false)
              }
            }}
          />
        </section>
      )}
      <PolicyList appId={app.id} />
    </section>
  )
}

function PolicyList({ appId }: { appId: string }) {
  const [cursors, setCursors] = useState<(string | null)[]>([null])
  const [page, setPage] = useState<Listed<'listPolicies'> | null>(null)
  const [error, setError] = useState<unknown>(null)
  const cursor = cursors[cursors.length - 1] ?? null
  const base = `/applications/${encodeURIComponent(appId)}`

  useEffect(() => {
    let live = true
    setPage(null)
    answer(
      warden.GET('/v1/applications/{application_id}/policies', {
        params: { path: { application_id: appId }, query: { limit: 50, cursor: cursor ?? undefined } },
      }),
    )
      .then((got) => live && setPage(got.data))
      .catch((caught) => live && setError(caught))
    return () => {
      live = false
    }
  }, [appId, cursor])

  return (
    <section aria-labelledby="policies">
      <div class="title-row">
        <h2 id="policies">Policies</h2>
        <div class="actions">
          <Link class="button" to={`${base}/playground`}>
            Open the playground
          </Link>
          <Link class="button primary" to={`${base}/policies/new`}>
            New policy
          </Link>
        </div>
      </div>
      <ErrorSummary error={error} />
      {!page && !error && <Loading what="Loading policies" />}
      {page && page.data.length === 0 && cursors.length === 1 && (
        <p class="empty">No policies yet: the application's evaluations pass everything.</p>
      )}
      {page && page.data.length > 0 && (
        <TableRegion label="Policies">
          <table>
            <thead>
              <tr>
                <th scope="col">Policy</th>
                <th scope="col">Mode</th>
                <th scope="col">Targets</th>
                <th scope="col">Rules</th>
                <th scope="col">Revision</th>
                <th scope="col">Updated</th>
                <th scope="col">
                  <span class="visually-hidden">Links</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {page.data.map((policy) => {
                const to = `${base}/policies/${encodeURIComponent(policy.id)}`
                return (
                  <tr key={policy.id}>
                    <td>
                      <Link to={to}>
                        <code>{policy.id}</code>
                      </Link>
                    </td>
                    <td>
                      <Badge value={policy.mode ?? 'enforce'} />
                    </td>
                    <td>{policy.target.join(', ')}</td>
                    <td>{policy.rules.map((r) => r.type).join(', ')}</td>
                    <td>{policy.revision}</td>
                    <td>{formatTime(policy.updated)}</td>
                    <td class="links">
                      <Link to={`${to}/revisions`} aria-label={`Revisions of ${policy.id}`}>
                        Revisions
                      </Link>
                      <Link to={`${to}/tests`} aria-label={`Tests of ${policy.id}`}>
                        Tests
                      </Link>
                      <Link
                        to={`${base}/playground?policy=${encodeURIComponent(policy.id)}`}
                        aria-label={`Try ${policy.id} in the playground`}
                      >
                        Try
                      </Link>
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </TableRegion>
      )}
      {(cursors.length > 1 || page?.next_cursor) && (
        <Pager
          label="Pages of policies"
          cursors={cursors}
          setCursors={setCursors}
          nextCursor={page?.next_cursor}
        />
      )}
    </section>
  )
}
