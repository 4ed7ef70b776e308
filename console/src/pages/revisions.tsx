import { useEffect, useMemo, useState } from 'preact/hooks'
import { answer, type Listed, type Policy, warden } from '../api'
import { ErrorSummary, formatTime, Loading, PageTitle, TableRegion } from '../components'
import { Link } from '../router'
import { diffLines, stableJson } from '../text'

/** Most revisions a page reads (4 pages of 200); older ones are listed as missing. */
const MAX_PAGES = 4

/** What a revision says, without the bookkeeping that differs on every one. */
function comparable(policy: Policy): string {
  const { created: _created, updated: _updated, revision: _revision, application_id: _app, ...rest } = policy
  return stableJson(rest)
}

/** A labelled choice of one of the listed revisions. */
function RevisionPick(props: {
  id: string
  label: string
  revisions: readonly Policy[]
  value: number | null
  onPick: (revision: number) => void
}) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <select
        id={props.id}
        value={props.value ?? ''}
        onChange={(e) => props.onPick(Number(e.currentTarget.value))}
      >
        {props.revisions.map((r) => (
          <option key={r.revision} value={r.revision}>
            Revision {r.revision}
          </option>
        ))}
      </select>
    </div>
  )
}

/** A policy's history, newest first, and a side-by-side difference of any two revisions. */
export function RevisionsPage({ appId, policyId }: { appId: string; policyId: string }) {
  const [revisions, setRevisions] = useState<Policy[] | null>(null)
  const [more, setMore] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [left, setLeft] = useState<number | null>(null)
  const [right, setRight] = useState<number | null>(null)

  useEffect(() => {
    let live = true
    const all: Policy[] = []
    ;(async () => {
      let cursor: string | null = null
      for (let i = 0; i < MAX_PAGES; i++) {
        const got: { data: Listed<'listPolicyRevisions'> } = await answer(
          warden.GET('/v1/applications/{application_id}/policies/{policy_id}/revisions', {
            params: {
              path: { application_id: appId, policy_id: policyId },
              query: { limit: 200, cursor: cursor ?? undefined },
            },
          }),
        )
        all.push(...got.data.data)
        cursor = got.data.next_cursor
        if (!cursor) break
      }
      if (!live) return
      setMore(cursor !== null)
      setRevisions(all)
      setRight(all[0]?.revision ?? null)
      setLeft(all[1]?.revision ?? all[0]?.revision ?? null)
    })().catch((caught) => live && setError(caught))
    return () => {
      live = false
    }
  }, [appId, policyId])

  const byRevision = useMemo(() => new Map((revisions ?? []).map((r) => [r.revision, r])), [revisions])
  const older = left !== null ? byRevision.get(left) : undefined
  const newer = right !== null ? byRevision.get(right) : undefined
  const rows = useMemo(
    () => (older && newer ? diffLines(comparable(older), comparable(newer)) : []),
    [older, newer],
  )
  const changes = rows.filter((r) => r.kind !== 'same').length
  const policyLink = `/applications/${encodeURIComponent(appId)}/policies/${encodeURIComponent(policyId)}`

  return (
    <section>
      <nav class="breadcrumbs" aria-label="Breadcrumbs">
        <Link to={`/applications/${encodeURIComponent(appId)}`}>{appId}</Link>{' '}
        <span aria-hidden="true">›</span> <Link to={policyLink}>{policyId}</Link>{' '}
        <span aria-hidden="true">›</span> revisions
      </nav>
      <PageTitle>Revisions of {policyId}</PageTitle>
      <ErrorSummary error={error} />
      {!revisions && !error && <Loading what="Loading revisions" />}
      {revisions && (
        <>
          <TableRegion label="Revisions">
            <table class="revisions">
              <thead>
                <tr>
                  <th scope="col">Revision</th>
                  <th scope="col">Saved</th>
                  <th scope="col">Rules</th>
                  <th scope="col">Targets</th>
                  <th scope="col">Mode</th>
                </tr>
              </thead>
              <tbody>
                {revisions.map((r) => (
                  <tr key={r.revision}>
                    <td>{r.revision}</td>
                    <td>{formatTime(r.updated)}</td>
                    <td>{r.rules.map((rule) => rule.type).join(', ')}</td>
                    <td>{r.target.join(', ')}</td>
                    <td>{r.mode ?? 'enforce'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
          {more && <p class="hint">Only the newest {revisions.length} revisions are listed.</p>}
          <h2>Compare two revisions</h2>
          <div class="grid two compare-pick">
            <RevisionPick
              id="compare-left"
              label="Older (left)"
              revisions={revisions}
              value={left}
              onPick={setLeft}
            />
            <RevisionPick
              id="compare-right"
              label="Newer (right)"
              revisions={revisions}
              value={right}
              onPick={setRight}
            />
          </div>
          {older && newer && (
            <>
              <output class="diff-summary">
                {changes === 0
                  ? `Revisions ${older.revision} and ${newer.revision} are the same.`
                  : `${changes} changed ${changes === 1 ? 'line' : 'lines'} between revision ${older.revision} and revision ${newer.revision}.`}
              </output>
              <TableRegion label={`Difference between revisions ${older.revision} and ${newer.revision}`}>
                <table class="diff">
                  <thead>
                    <tr>
                      <th scope="col" colSpan={2}>
                        Revision {older.revision}
                      </th>
                      <th scope="col" colSpan={2}>
                        Revision {newer.revision}
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((row, i) => (
                      <tr key={i} class={`diff-${row.kind}`}>
                        <td class="line-number">{row.leftNumber ?? ''}</td>
                        <td
                          class={`code left${row.kind === 'removed' || row.kind === 'changed' ? ' del' : ''}`}
                        >
                          {(row.kind === 'removed' || row.kind === 'changed') && (
                            <span class="visually-hidden">removed: </span>
                          )}
                          {row.left ?? ''}
                        </td>
                        <td class="line-number">{row.rightNumber ?? ''}</td>
                        <td
                          class={`code right${row.kind === 'added' || row.kind === 'changed' ? ' ins' : ''}`}
                        >
                          {(row.kind === 'added' || row.kind === 'changed') && (
                            <span class="visually-hidden">added: </span>
                          )}
                          {row.right ?? ''}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableRegion>
            </>
          )}
        </>
      )}
    </section>
  )
}
