import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installMetrics } from '../../src/http/metrics.js'
import { Metrics, type MetricsServer, startMetricsServer } from '../../src/metrics.js'
import { shippedClassifiers } from '../../src/models/shipped.js'
import { compilePolicy, evaluate } from '../../src/rules/evaluate.js'
import { StoreUnavailableError } from '../../src/store/errors.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'

/** The value of one series in a Prometheus text page, by its name and exact label set. */
function sample(page: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
  for (const line of page.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match || match[1] !== name) continue
    const got = (match[2] ?? '')
      .split(/,(?=[a-z_]+=")/)
      .filter(Boolean)
      .sort()
    if (JSON.stringify(got) === JSON.stringify(wanted)) return Number(match[3])
  }
  return undefined
}

/** Every distinct value a label takes in a metric's series. */
const labelValues = (page: string, name: string, label: string) =>
  new Set(
    page
      .split('\n')
      .filter((line) => line.startsWith(`${name}{`))
      .map((line) => new RegExp(`${label}="([^"]*)"`).exec(line)?.[1]),
  )

describe.each(STORE_KINDS)('Prometheus metrics (%s)', (kind) => {
  let t: TestApp
  let server: MetricsServer
  const scrape = async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    return res.text()
  }

  beforeAll(async () => {
    t = await createTestApp(kind)
    const metrics = t.services.metrics
    if (!metrics) throw new Error('metrics are on by default')
    // Port 0: the listener takes a free port, so that test files never collide on 9464.
    server = await startMetricsServer(metrics, '127.0.0.1', 0)
    await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'bot', name: 'Bot', description: '' },
    })
    await t.request({
      method: 'POST',
      url: '/v1/applications/bot/policies',
      payload: {
        id: 'no-cards',
        rules: [{ type: 'pii', flagged: ['credit_card'] }, { type: 'prompt_injection' }],
        target: ['input'],
      },
    })
  })
  afterAll(async () => {
    await server.close()
    await t.close()
  })

  it('counts requests by route pattern, method and status, never by URL, with a latency histogram', async () => {
    for (const id of ['a-1', 'a-2', 'a-3']) {
      await t.request({ method: 'GET', url: `/v1/applications/${id}` })
    }
    await t.request({ method: 'GET', url: '/v1/applications/bot' })
    await t.request({ method: 'GET', url: '/no/such/path/12345' })
    const page = await scrape()
    const route = '/v1/applications/:application_id'
    expect(
      sample(page, 'warden_http_request_duration_seconds_count', { route, method: 'GET', status: '404' }),
    ).toBe(3)
    expect(
      sample(page, 'warden_http_request_duration_seconds_count', { route, method: 'GET', status: '200' }),
    ).toBe(1)
    expect(
      sample(page, 'warden_http_request_duration_seconds_bucket', {
        route,
        method: 'GET',
        status: '200',
        le: '+Inf',
      }),
    ).toBe(1)
    expect(
      sample(page, 'warden_http_request_duration_seconds_count', {
        route: '(unmatched)',
        method: 'GET',
        status: '404',
      }),
    ).toBe(1)
    expect(page).not.toContain('a-1')
    expect(page).not.toContain('12345')
    expect(page).toContain('# TYPE warden_http_request_duration_seconds histogram')
  })

  it('counts evaluations by application, verdict and action, each policy by its verdict, and times each rule', async () => {
    const evaluate = (content: string) =>
      t.request({
        method: 'POST',
        url: '/v1/applications/bot/evaluations',
        payload: {
          messages: [{ role: 'user', content }],
          draft_policies: [
            { id: 'draft-only', rules: [{ type: 'length', value: '5000' }], target: ['input'] },
          ],
        },
      })
    expect((await evaluate('Where is my order?')).statusCode).toBe(200)
    expect((await evaluate('My card is 4111 1111 1111 1111')).json().verdict).toBe('fail')
    expect((await evaluate('And 5500 0000 0000 0004 too')).json().verdict).toBe('fail')
    const page = await scrape()
    expect(
      sample(page, 'warden_evaluations_total', {
        workspace_id: t.workspaceId,
        application_id: 'bot',
        verdict: 'pass',
        action: 'allow',
      }),
    ).toBe(1)
    expect(
      sample(page, 'warden_evaluations_total', {
        workspace_id: t.workspaceId,
        application_id: 'bot',
        verdict: 'fail',
        action: 'block',
      }),
    ).toBe(2)
    expect(
      sample(page, 'warden_policy_evaluations_total', {
        workspace_id: t.workspaceId,
        application_id: 'bot',
        policy_id: 'no-cards',
        verdict: 'fail',
        action: 'block',
      }),
    ).toBe(2)
    // Drafts are experiments, not enforced policies: they are not counted by id.
    expect(page).not.toContain('draft-only')
    expect(sample(page, 'warden_rule_duration_seconds_count', { type: 'pii', method: 'detector' })).toBe(3)
    expect(
      sample(page, 'warden_rule_duration_seconds_count', { type: 'prompt_injection', method: 'model' }),
    ).toBe(3)
    expect(sample(page, 'warden_rule_duration_seconds_count', { type: 'length', method: 'detector' })).toBe(3)
    // Test runs are not production evaluations: they are not counted.
    await t.request({ method: 'POST', url: '/v1/applications/bot/policies/no-cards/test-runs', payload: {} })
    await t.request({
      method: 'POST',
      url: '/v1/applications/bot/policies/no-cards/tests',
      payload: { name: 'x', messages: [{ role: 'user', content: 'hi' }], expected: { verdict: 'pass' } },
    })
    await t.request({ method: 'POST', url: '/v1/applications/bot/policies/no-cards/test-runs', payload: {} })
    const after = await scrape()
    expect(sample(after, 'warden_rule_duration_seconds_count', { type: 'pii', method: 'detector' })).toBe(3)
    // Nor are playground runs: logged, and counted in no evaluation total.
    const tried = await t.request({
      method: 'POST',
      url: '/v1/applications/bot/evaluations',
      payload: {
        messages: [{ role: 'user', content: 'My card is 4111 1111 1111 1111' }],
        source: 'playground',
      },
    })
    expect(tried.json().verdict).toBe('fail')
    const played = await scrape()
    expect(
      sample(played, 'warden_evaluations_total', {
        workspace_id: t.workspaceId,
        application_id: 'bot',
        verdict: 'fail',
        action: 'block',
      }),
    ).toBe(2)
    expect(
      sample(played, 'warden_policy_evaluations_total', {
        workspace_id: t.workspaceId,
        application_id: 'bot',
        policy_id: 'no-cards',
        verdict: 'fail',
        action: 'block',
      }),
    ).toBe(2)
  })

  it('shows store errors (zero until one happens), the process and the event-loop lag', async () => {
    const page = await scrape()
    expect(sample(page, 'warden_store_errors_total', { kind: 'unavailable' })).toBe(0)
    expect(sample(page, 'warden_store_errors_total', { kind: 'query' })).toBe(0)
    expect(page).toContain('# TYPE nodejs_eventloop_lag_seconds gauge')
    const lag = (stat: string) => sample(page, 'nodejs_eventloop_lag_seconds', { stat }) ?? Number.NaN
    for (const stat of ['mean', 'p50', 'p90', 'p99', 'max']) {
      expect(lag(stat), stat).toBeGreaterThanOrEqual(0)
      // In seconds: no delay outlasts the process (in milli- or nanoseconds, it would).
      expect(lag(stat), stat).toBeLessThanOrEqual(process.uptime())
      expect(lag(stat), stat).toBeLessThanOrEqual(lag('max'))
    }
    expect(lag('p50')).toBeLessThanOrEqual(lag('p90'))
    expect(lag('p90')).toBeLessThanOrEqual(lag('p99'))
    expect(sample(page, 'process_cpu_seconds_total', {})).toBeGreaterThan(0)
    expect(sample(page, 'process_resident_memory_bytes', {})).toBeGreaterThan(1e6)
  })

  it('answers only GET and HEAD /metrics', async () => {
    const base = `http://127.0.0.1:${server.port}`
    expect((await fetch(`${base}/`)).status).toBe(404)
    expect((await fetch(`${base}/metrics/x`)).status).toBe(404)
    const post = await fetch(`${base}/metrics`, { method: 'POST' })
    expect(post.status).toBe(405)
    expect(post.headers.get('allow')).toBe('GET, HEAD')
    const head = await fetch(`${base}/metrics`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect((await fetch(`${base}/metrics?x=1`)).status).toBe(200)
  })
})

describe('metrics labels are bounded', () => {
  it('labels each workspace apart: two tenants’ support-bot are two series, and one tenant’s many ids fold only its own', async () => {
    const metrics = new Metrics({ maxLabelValues: 3 })
    const answer = {
      verdict: 'pass',
      action: 'allow',
      policies: [{ id: 'guard', draft: false, verdict: 'pass' }],
    }
    metrics.evaluation('tenant-a', 'support-bot', answer)
    for (let i = 0; i < 10; i++) metrics.evaluation('tenant-b', `bot-${i}`, answer)
    metrics.evaluation('tenant-b', 'support-bot', answer)
    metrics.evaluation('tenant-a', 'support-bot', answer)
    const page = await metrics.render()
    const series = (workspace: string, application: string) =>
      sample(page, 'warden_evaluations_total', {
        workspace_id: workspace,
        application_id: application,
        verdict: 'pass',
        action: 'allow',
      })
    expect(series('tenant-a', 'support-bot')).toBe(2)
    // tenant-b's ids past its cap fold into its own `other`; tenant-a keeps its series.
    expect(series('tenant-b', 'other')).toBe(8)
    expect(
      sample(page, 'warden_policy_evaluations_total', {
        workspace_id: 'tenant-a',
        application_id: 'support-bot',
        policy_id: 'guard',
        verdict: 'pass',
        action: 'allow',
      }),
    ).toBe(2)
  })

  it('keeps the first ids of applications and policies, and folds the rest into other', async () => {
    const metrics = new Metrics({ maxLabelValues: 3 })
    for (let i = 0; i < 6; i++) {
      metrics.evaluation('ws', `app-${i}`, {
        verdict: 'fail',
        action: 'block',
        policies: [{ id: `policy-${i}`, draft: false, verdict: 'fail' }],
      })
    }
    const page = await metrics.render()
    expect(labelValues(page, 'warden_evaluations_total', 'application_id')).toEqual(
      new Set(['app-0', 'app-1', 'app-2', 'other']),
    )
    expect(labelValues(page, 'warden_policy_evaluations_total', 'policy_id')).toEqual(
      new Set(['policy-0', 'policy-1', 'policy-2', 'other']),
    )
    expect(
      sample(page, 'warden_evaluations_total', {
        workspace_id: 'ws',
        application_id: 'other',
        verdict: 'fail',
        action: 'block',
      }),
    ).toBe(3)
    // A value seen before the cap stays itself.
    metrics.evaluation('ws', 'app-1', { verdict: 'pass', action: 'allow', policies: [] })
    expect(
      sample(await metrics.render(), 'warden_evaluations_total', {
        workspace_id: 'ws',
        application_id: 'app-1',
        verdict: 'pass',
        action: 'allow',
      }),
    ).toBe(1)
  })

  it('counts an unknown method as other, and judge calls by type and outcome', async () => {
    const metrics = new Metrics()
    metrics.request('/v1/applications', 'BREW', 405, 0.001)
    metrics.judgeCall({ type: 'custom', outcome: 'answered', ms: 120 })
    metrics.judgeCall({ type: 'custom', outcome: 'timeout', ms: 10_000 })
    metrics.judgeCall({ type: 'relevance', outcome: 'cached', ms: 0 })
    const page = await metrics.render()
    expect(
      sample(page, 'warden_http_request_duration_seconds_count', {
        route: '/v1/applications',
        method: 'other',
        status: '405',
      }),
    ).toBe(1)
    expect(
      sample(page, 'warden_judge_call_duration_seconds_count', { type: 'custom', outcome: 'timeout' }),
    ).toBe(1)
    expect(
      sample(page, 'warden_judge_call_duration_seconds_sum', { type: 'custom', outcome: 'answered' }),
    ).toBe(0.12)
    expect(
      sample(page, 'warden_judge_call_duration_seconds_count', { type: 'relevance', outcome: 'cached' }),
    ).toBe(1)
  })

  it('times a judged rule until its judge answered, through the evaluator’s observer', async () => {
    const seen: [string, string, number][] = []
    let now = 1000
    const policy = compilePolicy(
      {
        id: 'p',
        revision: 1,
        draft: false,
        rules: [
          { type: 'custom', expected: 'pass', value: null, threshold: null, flagged: null },
          { type: 'length', expected: 'pass', value: '10', threshold: null, flagged: null },
        ],
        target: ['output'],
        definition: 'Be kind.',
        override_response: null,
        mode: 'enforce',
        on_error: 'fail_closed',
      },
      shippedClassifiers(),
    )
    await evaluate(
      [policy],
      { messages: [{ role: 'assistant', content: 'hello' }], context: null },
      {
        judge: {
          model: 'm',
          score: async () => {
            now += 250
            return { score: 0.9, reason: 'kind' }
          },
        },
        workspace: 'w',
        observeRule: (type, method, seconds) => seen.push([type, method, seconds]),
        clock: () => now,
      },
    )
    expect(seen).toEqual([
      ['length', 'detector', 0],
      ['custom', 'judge', 0.25],
    ])
  })
})

describe('store errors', () => {
  it('counts an outage and an unexpected driver error met while serving a request, and nothing else', async () => {
    const metrics = new Metrics()
    const app = Fastify()
    installMetrics(app, metrics)
    app.get('/outage', async () => {
      throw new StoreUnavailableError(new Error('connect ECONNREFUSED'))
    })
    app.get('/query', async () => {
      throw Object.assign(new Error('no such column: x'), { code: 'SQLITE_ERROR' })
    })
    app.get('/other', async () => {
      throw Object.assign(new Error('not ours'), { code: 'not_found' })
    })
    for (const url of ['/outage', '/outage', '/query', '/other']) await app.inject({ method: 'GET', url })
    const page = await metrics.render()
    expect(sample(page, 'warden_store_errors_total', { kind: 'unavailable' })).toBe(2)
    expect(sample(page, 'warden_store_errors_total', { kind: 'query' })).toBe(1)
    expect(
      sample(page, 'warden_http_request_duration_seconds_count', {
        route: '/outage',
        method: 'GET',
        status: '500',
      }),
    ).toBe(2)
    await app.close()
  })
})

describe('metrics off', () => {
  it('records nothing and installs no hook with METRICS_PORT=0', async () => {
    const t = await createTestApp('sqlite', { METRICS_PORT: '0' })
    try {
      expect(t.config.metricsPort).toBe(0)
      expect(t.services.metrics).toBeNull()
      expect((await t.request({ method: 'GET', url: '/v1/applications' })).statusCode).toBe(200)
    } finally {
      await t.close()
    }
  })
})
