/** Unix time in whole seconds, UTC. */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000)
