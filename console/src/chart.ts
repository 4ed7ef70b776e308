// The evaluation log's chart, as numbers: entries grouped into time buckets. It imports nothing,
// so the unit tier tests it directly.

/** Evaluations in one bucket of time, by verdict. */
export interface Bucket {
  start: number
  pass: number
  fail: number
}

const STEPS = [60, 300, 900, 3600, 6 * 3600, 86400, 7 * 86400]

/** Groups entries into 12 to about 48 time buckets of a round size, the newest last. */
export function bucketize(entries: readonly { created: number; verdict: string }[]): {
  step: number
  buckets: Bucket[]
} {
  if (entries.length === 0) return { step: 3600, buckets: [] }
  const times = entries.map((e) => e.created)
  const first = Math.min(...times)
  const last = Math.max(...times)
  const step = STEPS.find((s) => (last - first) / s <= 48) ?? 7 * 86400
  const end = Math.floor(last / step) * step
  // At least 12 buckets, so a burst of evaluations is a bar in time rather than a wall.
  const origin = Math.min(Math.floor(first / step) * step, end - 11 * step)
  const count = (end - origin) / step + 1
  const buckets: Bucket[] = Array.from({ length: count }, (_, i) => ({
    start: origin + i * step,
    pass: 0,
    fail: 0,
  }))
  for (const e of entries) {
    const bucket = buckets[Math.floor((e.created - origin) / step)]
    if (!bucket) continue
    if (e.verdict === 'pass') bucket.pass++
    else bucket.fail++
  }
  return { step, buckets }
}

const STEP_NAMES: Record<number, string> = {
  60: 'minute',
  300: '5 minutes',
  900: '15 minutes',
  3600: 'hour',
  21600: '6 hours',
  86400: 'day',
  604800: 'week',
}

/** How the chart names a bucket's length. */
export function stepName(step: number): string {
  return STEP_NAMES[step] ?? `${step} seconds`
}
