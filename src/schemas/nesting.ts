import { pointerToken } from '../errors.js'

/**
 * The most levels of arrays and objects a body that is passed on as sent may nest, the body
 * itself being the first. Serialising a value nested some thousands deep overflows the stack;
 * a real request stays far below this: a JSON Schema nested ten deep in a tool's `parameters`
 * or in `response_format` is some 25 levels of the body.
 */
export const MAX_NESTING_DEPTH = 64

interface Level {
  value: object
  depth: number
  parent: Level | null
  key: string
}

/** The JSON Pointer of the first array or object (in document order) nested deeper than `limit` levels, or null. */
export function tooDeep(body: object, limit: number): string | null {
  const pending: Level[] = [{ value: body, depth: 1, parent: null, key: '' }]
  for (let level = pending.pop(); level !== undefined; level = pending.pop()) {
    if (level.depth > limit) return pointerOf(level)
    const children = Object.entries(level.value)
    // Pushed last to first, so that the first in document order is visited first.
    for (let i = children.length - 1; i >= 0; i--) {
      const [key, child] = children[i] as [string, unknown]
      if (typeof child === 'object' && child !== null)
        pending.push({ value: child, depth: level.depth + 1, parent: level, key })
    }
  }
  return null
}

function pointerOf(level: Level): string {
  let pointer = ''
  for (let at: Level | null = level; at?.parent; at = at.parent)
    pointer = `/${pointerToken(at.key)}${pointer}`
  return pointer
}
