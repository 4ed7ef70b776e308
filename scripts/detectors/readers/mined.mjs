// What the `mined-*` sources share: the trigger words of triggers.json (triggers.mjs), mined
// ones to look for and held-out ones whose units are never mined, handed in by prepare-data.

/** The trigger lists, or a clear error when the run was given none. */
export function requireTriggers(triggers) {
  if (!triggers) throw new Error('mined sources need --triggers FILE (written by triggers.mjs)')
  return triggers
}
