/**
 * Prometheus series of guard detectors: calls by detector and outcome with their latency, and
 * cascade escalations (the offline model unsure, the guard asked) by detector and rule type.
 * Created on the registry they are given; detector names come from the operator's
 * configuration, so their label values are bounded.
 */
import { Counter, Histogram, type Registry } from 'prom-client'
import type { GuardCallReport } from './client.js'

/** Seconds: a cache hit to a slow guard's ten seconds. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export interface GuardMetrics {
  /** Records one question (a GuardClient's `onCall`). */
  call(report: GuardCallReport): void
  /** Records that a cascade asked the guard: the offline model's score was inside the band. */
  escalation(detector: string, ruleType: string): void
}

export function createGuardMetrics(registry: Registry): GuardMetrics {
  const calls = new Counter({
    name: 'warden_guard_calls_total',
    help: 'Questions put to guard detectors, by detector and outcome (answered, cached, timeout, http, garbage, refused, network, aborted).',
    labelNames: ['detector', 'outcome'],
    registers: [registry],
  })
  const latency = new Histogram({
    name: 'warden_guard_call_duration_seconds',
    help: 'Time from asking a guard detector to its outcome (the wait for a free slot included), by detector and outcome.',
    labelNames: ['detector', 'outcome'],
    buckets: BUCKETS,
    registers: [registry],
  })
  const escalations = new Counter({
    name: 'warden_guard_escalations_total',
    help: 'Texts a cascade sent to a guard detector because the offline model was unsure, by detector and rule type.',
    labelNames: ['detector', 'rule_type'],
    registers: [registry],
  })
  return {
    call(report) {
      calls.inc({ detector: report.detector, outcome: report.outcome })
      latency.observe({ detector: report.detector, outcome: report.outcome }, report.ms / 1000)
    },
    escalation(detector, ruleType) {
      escalations.inc({ detector, rule_type: ruleType })
    },
  }
}
