import { describe, expect, it } from 'vitest'
import { tooDeep } from '../../src/schemas/nesting.js'

describe('tooDeep', () => {
  it('counts the body as the first level, arrays as objects are', () => {
    expect(tooDeep({}, 1)).toBeNull()
    expect(tooDeep({ a: 1, b: 'x', c: null }, 1)).toBeNull()
    expect(tooDeep({ a: {} }, 1)).toBe('/a')
    expect(tooDeep({ a: [[]] }, 2)).toBe('/a/0')
    expect(tooDeep({ a: [[]] }, 3)).toBeNull()
  })

  it('points at the first value too deep in document order, its keys escaped', () => {
    const body = { x: { y: 1 }, 'a/b': [0, { 'c~d': { e: {} } }], z: { w: { v: { u: {} } } } }
    expect(tooDeep(body, 4)).toBe('/a~1b/1/c~0d/e')
    expect(tooDeep(body, 5)).toBeNull()
  })
})
