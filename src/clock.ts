/** The time, as Warden reads it: handed in, so that tests can set it. */
export interface Clock {
  /** Unix time in whole seconds, UTC. */
  nowSeconds(): number
  /** Milliseconds since the epoch, for durations and caches. */
  nowMs(): number
}

/** The machine's clock. */
export const systemClock: Clock = {
  nowSeconds: () => Math.floor(Date.now() / 1000),
  nowMs: () => Date.now(),
}
