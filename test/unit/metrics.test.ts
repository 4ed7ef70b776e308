import { describe, expect, it } from 'vitest'
import { Metrics } from '../../src/metrics.js'

/** A registry with one of everything recorded. */
function recorded(): Metrics {
  const metrics = new Metrics()
  metrics.request('/v1/applications', 'GET', 200, 0.002)
  metrics.evaluation('w1', 'bot', {
    verdict: 'fail',
    action: 'block',
    policies: [{ id: 'no-pii', draft: false, verdict: 'fail' }],
  })
  metrics.rule('pii', 'detector', 0.0003)
  metrics.judgeCall({ type: 'custom', outcome: 'answered', ms: 40 })
  metrics.storeError('query')
  return metrics
}

describe("Warden's own series in prom-client's registry", () => {
  it('are reset by the registry to where a new one starts: the store errors at zero, nothing else', async () => {
    const metrics = recorded()
    expect(await metrics.render()).toContain(
      'warden_rule_duration_seconds_count{type="pii",method="detector"} 1',
    )
    metrics.registry.resetMetrics()
    expect(await metrics.render()).toBe(await new Metrics().render())
    // And they count again from there.
    metrics.storeError('unavailable')
    expect(await metrics.render()).toContain('warden_store_errors_total{kind="unavailable"} 1')
  })

  it('are given as JSON too, with their aggregator, as a cluster of workers merges them', async () => {
    const json = await recorded().registry.getMetricsAsJSON()
    expect(json.find((m) => m.name === 'warden_store_errors_total')).toEqual({
      name: 'warden_store_errors_total',
      help: expect.any(String),
      type: 'counter',
      aggregator: 'sum',
      values: [
        { labels: { kind: 'unavailable' }, value: 0 },
        { labels: { kind: 'query' }, value: 1 },
      ],
    })
    expect(json.find((m) => m.name === 'warden_judge_call_duration_seconds')?.values.at(-1)).toEqual({
      metricName: 'warden_judge_call_duration_seconds_count',
      labels: { type: 'custom', outcome: 'answered' },
      value: 1,
    })
  })
})
