import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fingerprint } from '../../src/services/idempotency.service.js'

/**
 * The canonical JSON of a body is only observable through the idempotency fingerprint, the
 * SHA-256 of method, path and that text. Computing the digest here pins the exact text: a
 * change to it would make every key stored in the last 24 hours refuse its own retry.
 */
const fingerprintOf = (method: string, path: string, canonicalText: string) =>
  createHash('sha256').update(`${method}\n${path}\n${canonicalText}`, 'utf8').digest('hex')

const body = (value: unknown) => fingerprint('POST', '/v1/applications', value)
const canonical = (text: string) => fingerprintOf('POST', '/v1/applications', text)

/** The same JSON with the members of every object in reverse order. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, member]) => [key, reversed(member)]),
  )
}

describe('canonical JSON of an idempotent request', () => {
  it('sorts object members by name, at every depth, without spaces', () => {
    expect(body({ name: 'n', description: '', parameters: { top_p: 1, temperature: 0 } })).toBe(
      canonical('{"description":"","name":"n","parameters":{"temperature":0,"top_p":1}}'),
    )
    expect(body({ b: [{ d: 1, c: 2 }], a: null })).toBe(canonical('{"a":null,"b":[{"c":2,"d":1}]}'))
  })

  it('writes scalars as JSON does, and an absent body as null', () => {
    expect(body('text')).toBe(canonical('"text"'))
    expect(body(1.5)).toBe(canonical('1.5'))
    expect(body(true)).toBe(canonical('true'))
    expect(body(null)).toBe(canonical('null'))
    expect(body(undefined)).toBe(canonical('null'))
    expect(body([])).toBe(canonical('[]'))
    expect(body({})).toBe(canonical('{}'))
  })

  it('does not depend on the order members were sent in', () => {
    expect(body({ a: 1, b: { x: 1, y: 2 } })).toBe(body({ b: { y: 2, x: 1 }, a: 1 }))
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(body(reversed(value))).toBe(body(value))
      }),
    )
  })

  it('keeps the order of array items', () => {
    expect(body({ target: ['input', 'output'] })).not.toBe(body({ target: ['output', 'input'] }))
    expect(body([{ a: 1 }, { b: 2 }])).not.toBe(body([{ b: 2 }, { a: 1 }]))
  })

  it('tells apart bodies that differ only in type, nulls or nesting', () => {
    const bodies = [
      { a: 1 },
      { a: '1' },
      { a: [1] },
      { a: { '': 1 } },
      { a: null },
      {},
      '{"a":1}',
      [['a', 1]],
      { a: 1, b: null },
    ]
    expect(new Set(bodies.map(body)).size).toBe(bodies.length)
  })

  it('sorts member names by UTF-16 code units and keeps unicode text as it is, unnormalised', () => {
    expect(body({ '\uffff': 1, '😀': 2, é: 3, b: 4, a: 5, B: 6 })).toBe(
      canonical('{"B":6,"a":5,"b":4,"é":3,"😀":2,"\uffff":1}'),
    )
    // "é" composed and decomposed are different text, so different requests.
    expect(body({ name: '\u00e9' })).toBe(canonical('{"name":"é"}'))
    expect(body({ name: '\u00e9' })).not.toBe(body({ name: 'e\u0301' }))
    // Lone surrogates are written as escapes (as JSON.stringify does), so they cannot collide.
    expect(body({ name: '\ud800' })).toBe(canonical('{"name":"\\ud800"}'))
    expect(body({ name: '\ud800' })).not.toBe(body({ name: '\ufffd' }))
  })

  it('includes the method and the path', () => {
    const value = { name: 'n', description: '' }
    const base = fingerprint('POST', '/v1/applications', value)
    expect(fingerprint('PUT', '/v1/applications', value)).not.toBe(base)
    expect(fingerprint('POST', '/v1/applications/a/policies', value)).not.toBe(base)
  })
})
