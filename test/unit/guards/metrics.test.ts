import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { createGuardMetrics } from '../../../src/guards/metrics.js'

describe('guard metrics', () => {
  it('counts calls by detector and outcome with their latency, and escalations by rule type', async () => {
    const registry = new Registry()
    const metrics = createGuardMetrics(registry)
    metrics.call({
      detector: 'llamaguard',
      format: 'llama-guard',
      ruleType: 'toxicity',
      outcome: 'answered',
      ms: 20,
    })
    metrics.call({
      detector: 'llamaguard',
      format: 'llama-guard',
      ruleType: 'toxicity',
      outcome: 'timeout',
      ms: 10_000,
    })
    metrics.escalation('prompt_guard', 'prompt_injection')
    const text = await registry.metrics()
    expect(text).toContain('warden_guard_calls_total{detector="llamaguard",outcome="answered"} 1')
    expect(text).toContain('warden_guard_calls_total{detector="llamaguard",outcome="timeout"} 1')
    expect(text).toContain(
      'warden_guard_call_duration_seconds_bucket{le="0.025",detector="llamaguard",outcome="answered"} 1',
    )
    expect(text).toContain(
      'warden_guard_call_duration_seconds_sum{detector="llamaguard",outcome="timeout"} 10',
    )
    expect(text).toContain(
      'warden_guard_escalations_total{detector="prompt_guard",rule_type="prompt_injection"} 1',
    )
  })
})
