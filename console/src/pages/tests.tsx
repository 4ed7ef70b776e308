import { useEffect, useState } from 'preact/hooks'
import {
  answer,
  isMissingEndpoint,
  type Listed,
  type TestCase,
  type TestResult,
  type TestRun,
  warden,
} from '../api'
import {
  Badge,
  ConfirmButton,
  ErrorSummary,
  Loading,
  NotAvailable,
  Notice,
  PageTitle,
  TableRegion,
} from '../components'
import { Link } from '../router'

/** The last message's text, as the API reads it (text parts joined with "\n"). */
function lastText(test: TestCase): string {
  const content: unknown = test.messages[test.messages.length - 1]?.content
  if (typeof content === 'string') return content
  if (Array.isArray(content))
    return content.map((part) => String((part as { text?: unknown }).text ?? '')).join('\n')
  return ''
}

/** A policy's test cases, and a run of all of them against its current revision. */
export function TestsPage({ appId, policyId }: { appId: string; policyId: string }) {
  const [tests, setTests] = useState<TestCase[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [unavailable, setUnavailable] = useState(false)
  const [run, setRun] = useState<TestRun | null>(null)
  const [busy, setBusy] = useState(false)
  const [reload, setReload] = useState(0)
  const at = { application_id: appId, policy_id: policyId }
  const appLink = `/applications/${encodeURIComponent(appId)}`
  const policyLink = `${appLink}/policies/${encodeURIComponent(policyId)}`

  useEffect(() => {
    let live = true
    // The policy first: a 404 from the tests list after it means this server has no tests endpoint.
    let policyFound = false
    ;(async () => {
      await answer(
        warden.GET('/v1/applications/{application_id}/policies/{policy_id}', { params: { path: at } }),
      )
      policyFound = true
      const all: TestCase[] = []
      let cursor: string | null = null
      for (let i = 0; i < 5; i++) {
        const got: { data: Listed<'listPolicyTests'> } = await answer(
          warden.GET('/v1/applications/{application_id}/policies/{policy_id}/tests', {
            params: { path: at, query: { limit: 200, cursor: cursor ?? undefined } },
          }),
        )
        all.push(...got.data.data)
        cursor = got.data.next_cursor
        if (!cursor) break
      }
      if (live) setTests(all)
    })().catch((caught) => {
      if (!live) return
      if (policyFound && isMissingEndpoint(caught)) setUnavailable(true)
      else setError(caught)
    })
    return () => {
      live = false
    }
  }, [appId, policyId, reload])

  const runAll = async () => {
    setBusy(true)
    setError(null)
    try {
      const ran = await answer(
        warden.POST('/v1/applications/{application_id}/policies/{policy_id}/test-runs', {
          params: { path: at },
          body: {},
        }),
      )
      setRun(ran.data)
    } catch (caught) {
      if (isMissingEndpoint(caught)) setUnavailable(true)
      else setError(caught)
    } finally {
      setBusy(false)
    }
  }

  const results = new Map<string, TestResult>((run?.results ?? []).map((r) => [r.test_id, r]))

  return (
    <section>
      <nav class="breadcrumbs" aria-label="Breadcrumbs">
        <Link to={appLink}>{appId}</Link> <span aria-hidden="true">›</span>{' '}
        <Link to={policyLink}>{policyId}</Link> <span aria-hidden="true">›</span> tests
      </nav>
      <div class="title-row">
        <PageTitle>Tests of {policyId}</PageTitle>
        {tests && (
          <button type="button" class="primary" disabled={busy || tests.length === 0} onClick={runAll}>
            {busy ? 'Running…' : 'Run all tests'}
          </button>
        )}
      </div>
      {unavailable && <NotAvailable what="policy tests" />}
      <ErrorSummary error={error} />
      {!tests && !error && !unavailable && <Loading what="Loading tests" />}
      {tests && tests.length === 0 && (
        <p class="empty">
          No test cases yet. Run a conversation in the{' '}
          <Link to={`${appLink}/playground?policy=${encodeURIComponent(policyId)}`}>playground</Link> and save
          it as a test case.
        </p>
      )}
      {run && (
        <Notice kind={run.summary.failed > 0 ? 'warning' : 'success'}>
          <span class="run-summary">
            {run.summary.total} run: {run.summary.passed} passed, {run.summary.failed} failed,{' '}
            {run.summary.skipped} skipped (revision {run.revision ?? 'draft'}).
          </span>
        </Notice>
      )}
      {tests && tests.length > 0 && (
        <TableRegion label="Test cases">
          <table>
            <thead>
              <tr>
                <th scope="col">Test</th>
                <th scope="col">Expected</th>
                <th scope="col">Last run</th>
                <th scope="col">Actual</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tests.map((test) => {
                const result = results.get(test.id)
                return (
                  <tr key={test.id}>
                    <td>
                      <strong class="test-name">{test.name}</strong> <code class="muted">{test.id}</code>
                      <div class="muted small">
                        {test.messages.length} messages
                        {lastText(test) ? `: “${lastText(test).slice(0, 60)}”` : ''}
                      </div>
                    </td>
                    <td>
                      <Badge value={test.expected.verdict} />
                      {test.expected.rules?.length ? (
                        <div class="small">
                          {test.expected.rules.map((r) => `rule ${r.index}: ${r.status}`).join(', ')}
                        </div>
                      ) : null}
                    </td>
                    <td>{result ? <Badge value={result.outcome} /> : '—'}</td>
                    <td>
                      {result ? (
                        <>
                          <Badge value={result.actual.verdict} />
                          <div class="small">
                            {result.actual.rules.map((r) => `rule ${r.index}: ${r.status}`).join(', ')}
                          </div>
                        </>
                      ) : (
                        '—'
                      )}
                    </td>
                    <td>
                      <ConfirmButton
                        class="danger small"
                        label="Delete"
                        ariaLabel={`Delete the test ${test.name}`}
                        title={`Delete the test ${test.name}?`}
                        message={<p>The test case is deleted from the policy.</p>}
                        confirmLabel="Delete"
                        onConfirm={async () => {
                          try {
                            await answer(
                              warden.DELETE(
                                '/v1/applications/{application_id}/policies/{policy_id}/tests/{test_id}',
                                {
                                  params: { path: { ...at, test_id: test.id } },
                                },
                              ),
                            )
                            setReload((n) => n + 1)
                          } catch (caught) {
                            setError(caught)
                          }
                        }}
                      />
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </TableRegion>
      )}
    </section>
  )
}
