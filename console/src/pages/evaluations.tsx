import { loggedEvaluationSourceValues, loggedEvaluationVerdictValues } from '@warden/client'
import { useEffect, useId, useMemo, useState } from 'preact/hooks'
import {
  answer,
  isMissingEndpoint,
  type Listed,
  type LoggedEvaluation,
  type Message,
  type Policy,
  type Query,
  warden,
} from '../api'
import { bucketize, stepName } from '../chart'
import {
  Badge,
  ErrorSummary,
  formatTime,
  Loading,
  NotAvailable,
  Pager,
  PageTitle,
  TableRegion,
} from '../components'
import { Link } from '../router'
import { EvaluationView } from './evaluation-view'

interface Filters {
  verdict: NonNullable<Query<'listEvaluations'>['verdict']> | ''
  source: NonNullable<Query<'listEvaluations'>['source']> | ''
  policy_id: string
  since: string
  until: string
}

const NO_FILTERS: Filters = { verdict: '', source: '', policy_id: '', since: '', until: '' }
/** The chart reads at most this many entries (5 pages of 200). */
const CHART_PAGES = 5

function toSeconds(local: string): number | undefined {
  if (!local) return undefined
  const ms = new Date(local).getTime()
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined
}

function query(filters: Filters): Query<'listEvaluations'> {
  return {
    verdict: filters.verdict || undefined,
    source: filters.source || undefined,
    policy_id: filters.policy_id || undefined,
    since: toSeconds(filters.since),
    until: toSeconds(filters.until),
  }
}

/** How many of an entry's rules masked what they found (status `masked`; docs/masking.md). */
function masks(entry: LoggedEvaluation): number {
  return (entry.policies ?? []).reduce(
    (n, p) => n + (p.rules ?? []).filter((r) => r.status === 'masked').length,
    0,
  )
}

/** The evaluation log: filters, a chart of verdicts over time, and the entries a page at a time. */
export function EvaluationLogPage({ appId }: { appId: string }) {
  const [form, setForm] = useState<Filters>(NO_FILTERS)
  const [filters, setFilters] = useState<Filters>(NO_FILTERS)
  const [policies, setPolicies] = useState<Policy[]>([])
  const [cursors, setCursors] = useState<(string | null)[]>([null])
  const [page, setPage] = useState<Listed<'listEvaluations'> | null>(null)
  const [chart, setChart] = useState<LoggedEvaluation[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [unavailable, setUnavailable] = useState(false)
  const cursor = cursors[cursors.length - 1] ?? null
  const ids = useId()

  useEffect(() => {
    answer(
      warden.GET('/v1/applications/{application_id}/policies', {
        params: { path: { application_id: appId }, query: { limit: 200 } },
      }),
    )
      .then((got) => setPolicies(got.data.data))
      .catch(() => setPolicies([]))
  }, [appId])

  useEffect(() => {
    let live = true
    setPage(null)
    setError(null)
    answer(
      warden.GET('/v1/applications/{application_id}/evaluations', {
        params: {
          path: { application_id: appId },
          query: { ...query(filters), limit: 50, cursor: cursor ?? undefined },
        },
      }),
    )
      .then((got) => live && setPage(got.data))
      .catch((caught) => {
        if (!live) return
        if (isMissingEndpoint(caught)) setUnavailable(true)
        else setError(caught)
      })
    return () => {
      live = false
    }
  }, [appId, filters, cursor])

  useEffect(() => {
    let live = true
    setChart(null)
    ;(async () => {
      const all: LoggedEvaluation[] = []
      let next: string | null = null
      for (let i = 0; i < CHART_PAGES; i++) {
        const got: { data: Listed<'listEvaluations'> } = await answer(
          warden.GET('/v1/applications/{application_id}/evaluations', {
            params: {
              path: { application_id: appId },
              query: { ...query(filters), limit: 200, cursor: next ?? undefined },
            },
          }),
        )
        all.push(...got.data.data)
        next = got.data.next_cursor
        if (!next) break
      }
      if (live) setChart(all)
    })().catch(() => live && setChart([]))
    return () => {
      live = false
    }
  }, [appId, filters])

  const set = (name: keyof Filters) => (event: { currentTarget: { value: string } }) =>
    setForm((f) => ({ ...f, [name]: event.currentTarget.value }) as Filters)

  return (
    <section>
      <PageTitle>Evaluation log</PageTitle>
      <p class="subtitle">
        Every evaluation of <Link to={`/applications/${encodeURIComponent(appId)}`}>{appId}</Link>, newest
        first. Its source says what asked: <code>api</code>, the evaluation call; <code>playground</code>, a
        run of the playground; <code>chat_input</code> and <code>chat_output</code>, a guarded chat
        completion's checks before and after the model; <code>responses_input</code> and{' '}
        <code>responses_output</code>, a guarded response's.
      </p>
      {unavailable ? (
        <NotAvailable what="the evaluation log" />
      ) : (
        <>
          <form
            class="card filters grid four"
            noValidate
            onSubmit={(event) => {
              event.preventDefault()
              setCursors([null])
              setFilters(form)
            }}
          >
            <div class="field">
              <label for={`${ids}-verdict`}>Verdict</label>
              <select id={`${ids}-verdict`} value={form.verdict} onChange={set('verdict')}>
                <option value="">any</option>
                {loggedEvaluationVerdictValues.map((verdict) => (
                  <option key={verdict} value={verdict}>
                    {verdict}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for={`${ids}-source`}>Source</label>
              <select id={`${ids}-source`} value={form.source} onChange={set('source')}>
                <option value="">any</option>
                {loggedEvaluationSourceValues.map((source) => (
                  <option key={source} value={source}>
                    {source}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for={`${ids}-policy`}>Policy</label>
              <select id={`${ids}-policy`} value={form.policy_id} onChange={set('policy_id')}>
                <option value="">any</option>
                {policies.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.id}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for={`${ids}-since`}>Since</label>
              <input id={`${ids}-since`} type="datetime-local" value={form.since} onInput={set('since')} />
            </div>
            <div class="field">
              <label for={`${ids}-until`}>Until</label>
              <input id={`${ids}-until`} type="datetime-local" value={form.until} onInput={set('until')} />
            </div>
            <div class="actions">
              <button type="submit" class="primary">
                Apply filters
              </button>
              <button
                type="button"
                onClick={() => {
                  setForm(NO_FILTERS)
                  setFilters(NO_FILTERS)
                  setCursors([null])
                }}
              >
                Clear
              </button>
            </div>
          </form>
          <ErrorSummary error={error} />
          {chart === null ? <Loading what="Loading the chart" /> : <VerdictChart entries={chart} />}
          {!page && !error && <Loading what="Loading evaluations" />}
          {page && page.data.length === 0 && cursors.length === 1 && (
            <p class="empty">
              No evaluations match. Run one in the{' '}
              <Link to={`/applications/${encodeURIComponent(appId)}/playground`}>playground</Link>.
            </p>
          )}
          {page && page.data.length > 0 && (
            <TableRegion label="Evaluations">
              <table>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Source</th>
                    <th scope="col">Verdict</th>
                    <th scope="col">Action</th>
                    <th scope="col">Policies</th>
                    <th scope="col">Latency</th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((e) => (
                    <tr key={e.id}>
                      <td>
                        <Link
                          to={`/applications/${encodeURIComponent(appId)}/evaluations/${encodeURIComponent(e.id)}`}
                        >
                          {formatTime(e.created)}
                        </Link>
                      </td>
                      <td class="source">
                        <code>{e.source}</code>
                      </td>
                      <td>
                        <Badge value={e.verdict} />
                      </td>
                      <td>
                        <Badge value={e.action} />
                      </td>
                      <td>
                        {(e.policies ?? []).map((p) => `${p.id}: ${p.verdict}`).join(', ') || '—'}
                        {masks(e) > 0 && (
                          <>
                            {' '}
                            <span class="badge badge-masked">
                              {masks(e) === 1 ? '1 rule masked' : `${masks(e)} rules masked`}
                            </span>
                          </>
                        )}
                      </td>
                      <td>{typeof e.latency_ms === 'number' ? `${e.latency_ms} ms` : '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableRegion>
          )}
          <Pager
            label="Pages of evaluations"
            cursors={cursors}
            setCursors={setCursors}
            nextCursor={page?.next_cursor}
            previousText="Newer"
            nextText="Older"
          />
        </>
      )}
    </section>
  )
}

/** Passes and failures over time as stacked bars, drawn as SVG; the numbers also as a table. */
function VerdictChart({ entries }: { entries: readonly LoggedEvaluation[] }) {
  const { step, buckets } = useMemo(() => bucketize(entries), [entries])
  if (buckets.length === 0) return null
  const width = 720
  const height = 180
  const pad = { left: 36, right: 8, top: 10, bottom: 28 }
  const max = Math.max(1, ...buckets.map((b) => b.pass + b.fail))
  const plotW = width - pad.left - pad.right
  const plotH = height - pad.top - pad.bottom
  const barW = plotW / buckets.length
  const y = (n: number) => pad.top + plotH - (n / max) * plotH
  const passed = entries.filter((e) => e.verdict === 'pass').length
  const summary = `${entries.length} evaluations by ${stepName(step)}: ${passed} passed, ${entries.length - passed} failed.`
  return (
    <figure class="chart card">
      <figcaption>
        Verdicts over time{' '}
        <span class="muted">
          (per {stepName(step)}; the newest {entries.length} entries)
        </span>
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={summary}>
        <line x1={pad.left} x2={width - pad.right} y1={y(0)} y2={y(0)} class="axis" />
        <text x={pad.left - 6} y={y(max) + 4} class="tick" text-anchor="end">
          {max}
        </text>
        <text x={pad.left - 6} y={y(0)} class="tick" text-anchor="end">
          0
        </text>
        {buckets.map((b, i) => {
          const x = pad.left + i * barW + barW * 0.1
          const w = Math.max(1, barW * 0.8)
          return (
            <g key={b.start}>
              <rect x={x} width={w} y={y(b.pass)} height={y(0) - y(b.pass)} class="bar-pass">
                <title>
                  {formatTime(b.start)}: {b.pass} passed
                </title>
              </rect>
              <rect
                x={x}
                width={w}
                y={y(b.pass + b.fail)}
                height={y(b.pass) - y(b.pass + b.fail)}
                class="bar-fail"
              >
                <title>
                  {formatTime(b.start)}: {b.fail} failed
                </title>
              </rect>
            </g>
          )
        })}
        <text x={pad.left} y={height - 8} class="tick">
          {formatTime(buckets[0]?.start)}
        </text>
        <text x={width - pad.right} y={height - 8} class="tick" text-anchor="end">
          {formatTime(buckets[buckets.length - 1]?.start)}
        </text>
      </svg>
      <p class="legend">
        <span class="swatch pass" aria-hidden="true" /> pass <span class="swatch fail" aria-hidden="true" />{' '}
        fail · {summary}
      </p>
    </figure>
  )
}

/** One logged evaluation, with its texts when the server stored them. */
export function EvaluationDetailPage({ appId, evaluationId }: { appId: string; evaluationId: string }) {
  const [entry, setEntry] = useState<LoggedEvaluation | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [unavailable, setUnavailable] = useState(false)

  useEffect(() => {
    answer(
      warden.GET('/v1/applications/{application_id}/evaluations/{evaluation_id}', {
        params: { path: { application_id: appId, evaluation_id: evaluationId } },
      }),
    )
      .then((got) => setEntry(got.data))
      .catch((caught) => (isMissingEndpoint(caught) ? setUnavailable(true) : setError(caught)))
  }, [appId, evaluationId])

  const messages: Message[] | null = entry?.messages ?? null
  const context: string[] | null = entry?.context ?? null
  const about: [string, string][] = entry
    ? [
        ['Asked by', entry.source],
        ['Texts kept', entry.content],
        ['API key', entry.key_id],
        ['Request id', entry.request_id],
      ]
    : []

  return (
    <section>
      <nav class="breadcrumbs" aria-label="Breadcrumbs">
        <Link to={`/applications/${encodeURIComponent(appId)}/evaluations`}>Evaluation log</Link>{' '}
        <span aria-hidden="true">›</span> {evaluationId}
      </nav>
      <PageTitle>Evaluation {entry ? formatTime(entry.created) : ''}</PageTitle>
      {unavailable && <NotAvailable what="this evaluation (or the evaluation log)" />}
      <ErrorSummary error={error} />
      {!entry && !error && !unavailable && <Loading what="Loading the evaluation" />}
      {entry && (
        <>
          <dl class="outcome">
            {about.map(([label, value]) => (
              <div key={label}>
                <dt>{label}</dt>
                <dd>
                  <code>{value}</code>
                </dd>
              </div>
            ))}
          </dl>
          {!messages && (
            <p class="hint">The server did not store this evaluation's texts (EVALUATION_LOG_CONTENT).</p>
          )}
          <EvaluationView
            evaluation={entry}
            messages={messages}
            context={context}
            logged={
              entry.content === 'redacted'
                ? 'redacted'
                : entry.content === 'full' && masks(entry) > 0
                  ? 'masked'
                  : null
            }
          />
          <details class="json-preview">
            <summary>As JSON</summary>
            <pre>{JSON.stringify(entry, null, 2)}</pre>
          </details>
        </>
      )}
    </section>
  )
}
