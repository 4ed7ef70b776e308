import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { mergePatch } from '../../src/services/support/merge-patch.js'

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The smallest merge patch that turns `source` into `target` (RFC 7396 section 2, in reverse). */
function diff(source: unknown, target: unknown): unknown {
  if (!isObject(source) || !isObject(target)) return target
  const patch: Record<string, unknown> = {}
  // Defined, not assigned: a member named `__proto__` would set the patch's prototype instead.
  const set = (key: string, value: unknown) =>
    Object.defineProperty(patch, key, { value, enumerable: true, writable: true, configurable: true })
  for (const key of Object.keys(source)) if (!Object.hasOwn(target, key)) set(key, null)
  for (const [key, value] of Object.entries(target)) {
    if (!Object.hasOwn(source, key)) set(key, value)
    else if (!isDeepStrictEqual(source[key], value)) set(key, diff(source[key], value))
  }
  return patch
}

/** A merge patch cannot set a member to null, so targets keep nulls only inside arrays. */
function withoutNullMembers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNullMembers)
  if (!isObject(value)) return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, member]) => member !== null)
      .map(([key, member]) => [key, withoutNullMembers(member)]),
  )
}

const json = fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown)

describe('mergePatch (RFC 7396)', () => {
  // RFC 7396 appendix A, row by row: original, patch, result.
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('appendix A: %j patched with %j is %j', (original, patch, result) => {
    expect(mergePatch(original, patch)).toEqual(result)
  })

  it('applies the example of RFC 7396 section 3', () => {
    const original = {
      title: 'Goodbye!',
      author: { givenName: 'John', familyName: 'Doe' },
      tags: ['example', 'sample'],
      content: 'This will be unchanged',
    }
    const patch = {
      title: 'Hello!',
      phoneNumber: '+01-123-456-7890',
      author: { familyName: null },
      tags: ['example'],
    }
    expect(mergePatch(original, patch)).toEqual({
      title: 'Hello!',
      author: { givenName: 'John' },
      tags: ['example'],
      content: 'This will be unchanged',
      phoneNumber: '+01-123-456-7890',
    })
  })

  it('deletes with null at any depth, and deleting what is absent changes nothing', () => {
    const target = { parameters: { temperature: 0.2, top_k: 40 }, name: 'n' }
    expect(mergePatch(target, { parameters: { temperature: null } })).toEqual({
      parameters: { top_k: 40 },
      name: 'n',
    })
    expect(mergePatch(target, { parameters: null })).toEqual({ name: 'n' })
    expect(mergePatch(target, { missing: null, parameters: { missing: null } })).toEqual(target)
  })

  it('replaces arrays whole, never merging them by index', () => {
    expect(mergePatch({ tags: ['a', 'b', 'c'] }, { tags: ['z'] })).toEqual({ tags: ['z'] })
    expect(mergePatch({ rules: [{ type: 'pii', value: 'x' }] }, { rules: [{ type: 'pii' }] })).toEqual({
      rules: [{ type: 'pii' }],
    })
    // A null inside an array is a value, not a deletion.
    expect(mergePatch({ a: [1] }, { a: [null, 2] })).toEqual({ a: [null, 2] })
  })

  it('merges nested objects member by member, creating the ones that are missing', () => {
    expect(mergePatch({ a: { b: { c: 1, d: 2 } } }, { a: { b: { c: 3 }, e: 4 } })).toEqual({
      a: { b: { c: 3, d: 2 }, e: 4 },
    })
    expect(mergePatch({ a: 'text' }, { a: { b: 1, c: null } })).toEqual({ a: { b: 1 } })
    expect(mergePatch(undefined, { a: { b: null } })).toEqual({ a: {} })
  })

  it('lets a patch that is not an object replace the whole target', () => {
    expect(mergePatch({ a: 1 }, 'text')).toBe('text')
    expect(mergePatch({ a: 1 }, 0)).toBe(0)
    expect(mergePatch({ a: 1 }, false)).toBe(false)
    expect(mergePatch({ a: 1 }, [])).toEqual([])
    expect(mergePatch({ a: 1 }, null)).toBeNull()
  })

  it('keeps an empty patch a no-op, including on a target that is not an object', () => {
    expect(mergePatch({ a: 1, b: [2] }, {})).toEqual({ a: 1, b: [2] })
    expect(mergePatch('text', {})).toEqual({})
  })

  it('treats member names such as __proto__ and constructor as ordinary members', () => {
    const target = JSON.parse('{"__proto__": {"kept": true}, "constructor": 1}')
    const patch = JSON.parse('{"__proto__": {"added": 2}, "toString": "s", "constructor": null}')
    const result = mergePatch(target, patch) as Record<string, unknown>
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype)
    expect(JSON.stringify(result)).toBe('{"__proto__":{"kept":true,"added":2},"toString":"s"}')
    expect(JSON.stringify(mergePatch({}, JSON.parse('{"__proto__": {"a": 1}}')))).toBe(
      '{"__proto__":{"a":1}}',
    )
    expect(({} as Record<string, unknown>).added).toBeUndefined()
  })

  it('reproduces the target from a patch made by diffing the source against it', () => {
    fc.assert(
      fc.property(json, json.map(withoutNullMembers), (source, target) => {
        expect(mergePatch(source, diff(source, target))).toEqual(target)
      }),
    )
  })

  it('is idempotent and leaves its arguments untouched', () => {
    fc.assert(
      fc.property(json, json, (target, patch) => {
        const before = structuredClone({ target, patch })
        const once = mergePatch(target, patch)
        expect(mergePatch(once, patch)).toEqual(once)
        expect({ target, patch }).toEqual(before)
      }),
    )
  })
})
