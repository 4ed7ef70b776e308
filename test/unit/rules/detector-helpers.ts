import type { TargetText } from '../../../src/rules/types.js'

/** A user message at messages[index]. */
export function msg(text: string, index = 0): TargetText {
  return { source: 'messages', index, role: 'user', text }
}

/** The code point slice [start, end) of `text`, as a Python slice would give. */
export function cpSlice(text: string, start: number, end: number): string {
  return Array.from(text).slice(start, end).join('')
}

/** A deterministic base62 string of `n` characters (no real secret is ever committed). */
export function fakeBase62(n: number, seed = 1): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
  let x = seed
  let out = ''
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648
    out += alphabet[x % 62]
  }
  return out
}
