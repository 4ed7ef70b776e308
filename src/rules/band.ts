/**
 * A cascade's band (docs/guards.md): scores at or between `low` and `high` are where the offline
 * model is unsure and the guard is asked. A rule's `cascade`, or its guard's GUARD_<NAME>_CASCADE.
 */
export interface Band {
  readonly low: number
  readonly high: number
}

/** Whether the offline model's `score` is inside the band, bounds included: the guard is asked. No band: always. */
export function insideBand(score: number, band: Band | null): boolean {
  return band === null || (score >= band.low && score <= band.high)
}
