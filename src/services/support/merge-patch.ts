type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

const isObject = (value: unknown): value is Record<string, Json> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** JSON Merge Patch (RFC 7396): objects merge recursively, `null` removes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): Json {
  if (!isObject(patch)) return patch as Json
  const result: Record<string, Json> = isObject(target) ? { ...target } : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key]
    // Defined, not assigned: assigning a member named `__proto__` would set the prototype instead.
    else
      Object.defineProperty(result, key, {
        value: mergePatch(result[key], value),
        enumerable: true,
        writable: true,
        configurable: true,
      })
  }
  return result
}
