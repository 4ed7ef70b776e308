import type { Clock } from '../../src/clock.js'

/** A clock a test sets: `ms` is the time in milliseconds since the epoch, `now` the same in seconds. */
export interface ManualClock extends Clock {
  ms: number
  now: number
}

/** A settable clock, starting at `seconds` (Unix time), for times a test chooses instead of waits for. */
export function manualClock(seconds: number): ManualClock {
  let ms = seconds * 1000
  return {
    get ms() {
      return ms
    },
    set ms(value: number) {
      ms = value
    },
    get now() {
      return Math.floor(ms / 1000)
    },
    set now(value: number) {
      ms = value * 1000
    },
    nowSeconds: () => Math.floor(ms / 1000),
    nowMs: () => ms,
  }
}
