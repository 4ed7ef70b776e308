/** Resolves in the next turn of the event loop (setImmediate), once this turn has done its work. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))
