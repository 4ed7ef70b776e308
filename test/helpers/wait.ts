/**
 * Resolves once `check` says true, asking again after each answer (with a pause of a few
 * milliseconds, so as not to spin). `deadlineMs` is a generous bound on something that should
 * happen, not a measure of how fast it does: the wait fails only if it never happens, naming `what`.
 */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  deadlineMs = 20_000,
): Promise<void> {
  const giveUpAt = Date.now() + deadlineMs
  while (!(await check())) {
    if (Date.now() > giveUpAt) throw new Error(`${what}: still not so after ${deadlineMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
