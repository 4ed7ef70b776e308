import { useEffect, useState } from 'preact/hooks'
import { answer, fieldErrorsOf, type Listed, warden } from '../api'
import { ErrorSummary, formatTime, Loading, Pager, PageTitle, TableRegion } from '../components'
import { Link, navigate } from '../router'
import { ApplicationForm, bodyOf, draftOf } from './application-form'

const PAGE_SIZE = 20

/** The workspace's applications, a page at a time, and a form to create one. */
export function ApplicationsPage() {
  // The cursors of the pages visited so far: the first page has none.
  const [cursors, setCursors] = useState<(string | null)[]>([null])
  const [page, setPage] = useState<Listed<'listApplications'> | null>(null)
  const [loadError, setLoadError] = useState<unknown>(null)
  const [creating, setCreating] = useState(false)
  const [createError, setCreateError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const cursor = cursors[cursors.length - 1] ?? null

  useEffect(() => {
    let live = true
    setPage(null)
    setLoadError(null)
    answer(
      warden.GET('/v1/applications', {
        params: { query: { limit: PAGE_SIZE, cursor: cursor ?? undefined } },
      }),
    )
      .then((answer) => live && setPage(answer.data))
      .catch((error) => live && setLoadError(error))
    return () => {
      live = false
    }
  }, [cursor])

  return (
    <section>
      <div class="title-row">
        <PageTitle>Applications</PageTitle>
        {!creating && (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            New application
          </button>
        )}
      </div>
      {creating && (
        <section aria-labelledby="new-application">
          <h2 id="new-application">New application</h2>
          <ErrorSummary error={createError} />
          <ApplicationForm
            initial={draftOf(null)}
            create
            errors={fieldErrorsOf(createError)}
            busy={busy}
            submitLabel="Create application"
            onCancel={() => {
              setCreating(false)
              setCreateError(null)
            }}
            onSubmit={async (draft) => {
              setBusy(true)
              setCreateError(null)
              try {
                const created = await answer(warden.POST('/v1/applications', { body: bodyOf(draft, true) }))
                navigate(`/applications/${encodeURIComponent(created.data.id)}`)
              } catch (error) {
                setCreateError(error)
              } finally {
                setBusy(false)
              }
            }}
          />
        </section>
      )}
      <ErrorSummary error={loadError} />
      {!page && !loadError && <Loading what="Loading applications" />}
      {page && page.data.length === 0 && cursors.length === 1 && (
        <p class="empty">No applications yet. Create one to attach policies to it.</p>
      )}
      {page && page.data.length > 0 && (
        <TableRegion label="Applications">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Id</th>
                <th scope="col">Provider</th>
                <th scope="col">Model</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {page.data.map((app) => (
                <tr key={app.id}>
                  <td>
                    <Link to={`/applications/${encodeURIComponent(app.id)}`}>{app.name}</Link>
                  </td>
                  <td>
                    <code>{app.id}</code>
                  </td>
                  <td>{app.provider ?? '—'}</td>
                  <td>{app.model ?? '—'}</td>
                  <td>{formatTime(app.updated)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
      <Pager
        label="Pages of applications"
        cursors={cursors}
        setCursors={setCursors}
        nextCursor={page?.next_cursor}
      />
    </section>
  )
}
