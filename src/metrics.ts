import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks'
import {
  type Aggregator,
  Counter,
  Gauge,
  type PrometheusContentType,
  Registry,
  type RegistryContentType,
} from 'prom-client'
import type { GuardCallReport } from './guards/client.js'
import { createGuardMetrics, type GuardMetrics } from './guards/metrics.js'
import type { JudgeCall } from './judge/openai.js'

/**
 * Prometheus metrics (docs/log-and-tests.md), served on a listener of their own (`METRICS_PORT`).
 * Label values are bounded: routes by their pattern, workspaces, and applications and policies by
 * id within their workspace (tenants choose ids: two tenants' `support-bot` are two series), at
 * most `maxLabelValues` distinct workspaces and as many ids of each kind in each workspace, the
 * rest counted under `other`: one tenant's many applications never fold another's away. The hot series are
 * recorded by `FastMetric` and rendered by prom-client's registry, with the process's own series.
 */

/** Folds label values beyond the first `max` distinct ones into `other`. */
export class LabelCap {
  private readonly seen = new Set<string>()
  constructor(private readonly max: number) {}

  map(value: string): string {
    if (this.seen.has(value)) return value
    if (this.seen.size >= this.max) return OTHER
    this.seen.add(value)
    return value
  }
}

export const OTHER = 'other'

/** What metrics read of an evaluation's answer. */
export interface EvaluatedAnswer {
  verdict: string
  action: string
  policies: readonly { id: string; draft: boolean; verdict: string }[]
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
/** How often Node samples the event loop's delay, in milliseconds. */
const LAG_RESOLUTION_MS = 10
/** Status codes as label text, made once. */
const STATUS_TEXT: Record<number, string> = Object.fromEntries(
  Array.from({ length: 500 }, (_, i) => [i + 100, String(i + 100)]),
)

/** Seconds: from a tenth of a millisecond (a detector on a short text) to a judge's ten seconds. */
const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
]

/** What a metric holds at a scrape, as prom-client's registry renders it. */
interface MetricSnapshot {
  name: string
  help: string
  type: 'counter' | 'histogram'
  aggregator: Aggregator
  values: { metricName?: string; labels: Record<string, string | number>; value: number }[]
}

/**
 * What prom-client's Registry reads of a metric it holds (lib/registry.js, prom-client 15): its
 * `name` and `type`, `get()` for its help and values (the text format, `getMetricsAsJSON`, and
 * cluster aggregation by `aggregator`), and `reset()` for `resetMetrics`. Its type declarations
 * name only its own four classes, so the registry is declared to take this too (below).
 */
export interface RegistryMetric {
  readonly name: string
  readonly help: string
  readonly type: MetricSnapshot['type']
  readonly aggregator: Aggregator
  get(): MetricSnapshot
  reset(): void
}

declare module 'prom-client' {
  interface Registry<BoundRegistryContentType extends RegistryContentType = PrometheusContentType> {
    /** Registers a metric that keeps its own numbers: what the registry reads of it, and no more. */
    registerMetric(metric: RegistryMetric): void
  }
}

/** A series of a counter or histogram: its labels and its numbers. */
interface Series {
  labels: Record<string, string>
  /** Per bucket, not cumulative (histograms only). */
  buckets: Float64Array
  sum: number
  count: number
}

/**
 * A counter or histogram whose series are found by their label values through nested maps, with
 * no key built and no label object checked: prom-client's own hash the labels on every
 * observation, which with a few per rule cost 5 to 9% of an evaluation request here
 * (bench/README.md). prom-client's registry renders it like its own (`get()`), and scrapes pay
 * for the rest.
 */
class FastMetric implements RegistryMetric {
  private readonly root = new Map<string, unknown>()
  private readonly all: Series[] = []
  readonly aggregator = 'sum'

  /** `initial`: the label values of the series that exist from the start (and after a reset), at zero. */
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
    private readonly labelNames: readonly string[],
    private readonly bounds: readonly number[] = [],
    private readonly initial: readonly (readonly string[])[] = [],
  ) {
    this.reset()
  }

  /** The series of these label values (one per label name, in order), made on first use. */
  series(...values: string[]): Series {
    let level = this.root
    const last = values.length - 1
    for (let i = 0; i < last; i++) {
      const value = values[i] as string
      let next = level.get(value) as Map<string, unknown> | undefined
      if (!next) {
        next = new Map()
        level.set(value, next)
      }
      level = next
    }
    const key = values[last] as string
    let found = level.get(key) as Series | undefined
    if (!found) {
      const labels: Record<string, string> = {}
      for (const [i, name] of this.labelNames.entries()) labels[name] = values[i] as string
      found = { labels, buckets: new Float64Array(this.bounds.length), sum: 0, count: 0 }
      level.set(key, found)
      this.all.push(found)
    }
    return found
  }

  /** Adds one observation (a histogram) or `value` (a counter) to a series. */
  add(series: Series, value: number): void {
    series.sum += value
    series.count++
    const bounds = this.bounds
    for (let i = 0; i < bounds.length; i++) {
      if (value <= (bounds[i] as number)) {
        series.buckets[i] = (series.buckets[i] as number) + 1
        return
      }
    }
  }

  /** Back to the start: the initial series at zero, no other. */
  reset(): void {
    this.root.clear()
    this.all.length = 0
    for (const values of this.initial) this.series(...values)
  }

  /** What prom-client's registry renders. */
  get(): MetricSnapshot {
    const values: MetricSnapshot['values'] = []
    for (const s of this.all) {
      if (this.type === 'counter') {
        values.push({ labels: s.labels, value: s.sum })
        continue
      }
      let cumulative = 0
      for (const [i, le] of this.bounds.entries()) {
        cumulative += s.buckets[i] as number
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le }, value: cumulative })
      }
      values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count })
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum })
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count })
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }
}

/** The ids a workspace's series are labelled with, bounded within the workspace. */
interface WorkspaceLabels {
  applications: LabelCap
  policies: LabelCap
}

export class Metrics {
  readonly registry = new Registry()
  private readonly maxLabelValues: number
  private readonly workspaces: LabelCap
  private readonly labels = new Map<string, WorkspaceLabels>()
  private loopDelay: IntervalHistogram | null = null

  private readonly requests = this.fast(
    'warden_http_request_duration_seconds',
    'HTTP requests by route pattern, method and status, with their latency; _count counts the requests.',
    'histogram',
    ['route', 'method', 'status'],
  )
  private readonly evaluations = this.fast(
    'warden_evaluations_total',
    'Evaluations by workspace, application, verdict and action.',
    'counter',
    ['workspace_id', 'application_id', 'verdict', 'action'],
  )
  private readonly policyEvaluations = this.fast(
    'warden_policy_evaluations_total',
    "Stored policies evaluated, by workspace, application, policy, the policy's verdict (pass, fail, error) and the evaluation's action.",
    'counter',
    ['workspace_id', 'application_id', 'policy_id', 'verdict', 'action'],
  )
  private readonly rules = this.fast(
    'warden_rule_duration_seconds',
    'Time to evaluate one rule, by rule type and method (detector, model, judge).',
    'histogram',
    ['type', 'method'],
  )
  private readonly judgeCalls = this.fast(
    'warden_judge_call_duration_seconds',
    'Questions put to the judge, by rule type and outcome (answered, cached, timeout, failed), with their latency from being asked (the wait for a free slot included).',
    'histogram',
    ['type', 'outcome'],
  )
  // Every series a client can look for exists from the start, at zero.
  private readonly storeErrors = this.fast(
    'warden_store_errors_total',
    'Store errors met while serving requests: unavailable (answered 503) or query (an unexpected error, answered 500).',
    'counter',
    ['kind'],
    [['unavailable'], ['query']],
  )

  constructor(options: { maxLabelValues?: number } = {}) {
    this.maxLabelValues = options.maxLabelValues ?? 1000
    this.workspaces = new LabelCap(this.maxLabelValues)
  }

  private fast(
    name: string,
    help: string,
    type: 'counter' | 'histogram',
    labels: readonly string[],
    initial: readonly (readonly string[])[] = [],
  ): FastMetric {
    const bounds = type === 'histogram' ? LATENCY_BUCKETS : []
    const metric = new FastMetric(name, help, type, labels, bounds, initial)
    this.registry.registerMetric(metric)
    return metric
  }

  /** One HTTP request answered; `route` is its pattern (`/v1/applications/:application_id`), never the URL. */
  request(route: string | undefined, method: string, status: number, seconds: number): void {
    const series = this.requests.series(
      route ?? '(unmatched)',
      METHODS.has(method) ? method : 'other',
      STATUS_TEXT[status] ?? String(status),
    )
    this.requests.add(series, seconds)
  }

  /**
   * One evaluation answered in a workspace, counted once, and once per stored policy it evaluated
   * (drafts are not counted).
   */
  evaluation(workspaceId: string, applicationId: string, answer: EvaluatedAnswer): void {
    const workspace = this.workspaces.map(workspaceId)
    let ids = this.labels.get(workspace)
    if (!ids) {
      ids = { applications: new LabelCap(this.maxLabelValues), policies: new LabelCap(this.maxLabelValues) }
      this.labels.set(workspace, ids)
    }
    const application = ids.applications.map(applicationId)
    this.evaluations.add(this.evaluations.series(workspace, application, answer.verdict, answer.action), 1)
    for (const policy of answer.policies) {
      if (policy.draft) continue
      const series = this.policyEvaluations.series(
        workspace,
        application,
        ids.policies.map(policy.id),
        policy.verdict,
        answer.action,
      )
      this.policyEvaluations.add(series, 1)
    }
  }

  /** One rule evaluated; the evaluator calls it (EvaluateOptions.observeRule). */
  readonly rule = (type: string, method: string, seconds: number): void => {
    this.rules.add(this.rules.series(type, method), seconds)
  }

  /** One question put to the judge (createOpenAiJudge's `onCall`). */
  readonly judgeCall = (call: JudgeCall): void => {
    this.judgeCalls.add(this.judgeCalls.series(call.type, call.outcome), call.ms / 1000)
  }

  /** Guard detectors' calls and cascade escalations (docs/guards.md), by detector. */
  private readonly guards: GuardMetrics = createGuardMetrics(this.registry)

  /** One question put to a guard detector (createGuardClient's `onCall`). */
  readonly guardCall = (call: GuardCallReport): void => {
    this.guards.call(call)
  }

  /** One text a cascade sent to a guard detector because the offline model was unsure. */
  readonly guardEscalation = (detector: string, ruleType: string): void => {
    this.guards.escalation(detector, ruleType)
  }

  storeError(kind: 'unavailable' | 'query'): void {
    this.storeErrors.add(this.storeErrors.series(kind), 1)
  }

  /**
   * Adds the process's own series, sampled in the background: event-loop lag (from Node's
   * event-loop delay histogram, over the time since the previous scrape), CPU time and resident
   * memory. Once, when the listener starts. Not prom-client's `collectDefaultMetrics`: with its
   * GC observer, the evaluation benchmark ran about 5% slower here (bench/README.md).
   */
  collectProcessMetrics(): void {
    if (this.loopDelay) return
    const delay = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS })
    delay.enable()
    this.loopDelay = delay
    const registers = [this.registry]
    // Node records the time between the sampling timer's turns: the lag is what exceeds its period.
    const seconds = (ns: number) =>
      Number.isFinite(ns) ? Math.max(0, ns - LAG_RESOLUTION_MS * 1e6) / 1e9 : 0
    const lag = new Gauge({
      name: 'nodejs_eventloop_lag_seconds',
      help: 'Event-loop delay since the previous scrape, by statistic (mean, p50, p90, p99, max).',
      labelNames: ['stat'] as const,
      registers,
      collect() {
        lag.labels('mean').set(seconds(delay.mean))
        lag.labels('p50').set(seconds(delay.percentile(50)))
        lag.labels('p90').set(seconds(delay.percentile(90)))
        lag.labels('p99').set(seconds(delay.percentile(99)))
        lag.labels('max').set(seconds(delay.max))
        delay.reset()
      },
    })
    let counted = 0
    const cpu = new Counter({
      name: 'process_cpu_seconds_total',
      help: 'User and system CPU time the process has spent, in seconds.',
      registers,
      collect() {
        const used = process.cpuUsage()
        const total = (used.user + used.system) / 1e6
        cpu.inc(total - counted)
        counted = total
      },
    })
    const memory = new Gauge({
      name: 'process_resident_memory_bytes',
      help: 'Resident memory size, in bytes.',
      registers,
      collect() {
        memory.set(process.memoryUsage.rss())
      },
    })
  }

  /** Stops the background sampling. */
  close(): void {
    this.loopDelay?.disable()
  }

  render(): Promise<string> {
    return this.registry.metrics()
  }
}

/** The metrics listener: `GET /metrics` in the Prometheus text format, nothing else. */
export interface MetricsServer {
  readonly port: number
  close(): Promise<void>
}

export async function startMetricsServer(
  metrics: Metrics,
  host: string,
  port: number,
): Promise<MetricsServer> {
  metrics.collectProcessMetrics()
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0]
    if (path !== '/metrics') {
      response
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end('Not found: try /metrics\n')
      return
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end()
      return
    }
    metrics.render().then(
      (text) => {
        response.writeHead(200, { 'content-type': metrics.registry.contentType })
        response.end(request.method === 'HEAD' ? undefined : text)
      },
      () => {
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics failed\n')
      },
    )
  })
  // A scraper keeps its connection open between scrapes; idle ones must not hold a stop.
  server.keepAliveTimeout = 5_000
  await new Promise<void>((done, fail) => {
    server.once('error', fail)
    server.listen(port, host, () => {
      server.off('error', fail)
      done()
    })
  })
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((done) => {
        metrics.close()
        server.closeAllConnections()
        server.close(() => done())
      }),
  }
}
