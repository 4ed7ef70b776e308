import { describe, expect, it } from 'vitest'
import { lengthMatcher, regexMatcher } from '../../../src/rules/detectors/index.js'
import { msg } from './detector-helpers.js'

describe('regexMatcher', () => {
  it('reports one finding per non-overlapping match', () => {
    const found = regexMatcher('\\d{3}-\\d{4}')(msg('call 555-1234 or 555-9876'))
    expect(found.map((f) => [f.kind, f.start, f.end, f.text])).toEqual([
      ['regex', 5, 13, '555-1234'],
      ['regex', 17, 25, '555-9876'],
    ])
  })
  it('converts offsets to code points after astral characters', () => {
    const found = regexMatcher('(?i)secret')(msg('😀😀 the SECRET 🙂 secret'))
    expect(found.map((f) => [f.start, f.end, f.text])).toEqual([
      [7, 13, 'SECRET'],
      [16, 22, 'secret'],
    ])
    const dots = regexMatcher('.')(msg('a😀b'))
    expect(dots.map((f) => f.text)).toEqual(['a', '😀', 'b'])
    expect(dots.map((f) => f.end)).toEqual([1, 2, 3])
  })
  it('reports empty matches without looping', () => {
    expect(regexMatcher('^')(msg('abc')).map((f) => [f.start, f.end])).toEqual([[0, 0]])
    expect(regexMatcher('x*')(msg('ab')).map((f) => [f.start, f.end])).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
    ])
    expect(regexMatcher('nothing')(msg('abc'))).toEqual([])
  })
  it('runs a catastrophic-backtracking pattern in linear time', () => {
    const found = regexMatcher('(a+)+$')(msg(`${'a'.repeat(100_000)}!`))
    expect(found).toEqual([])
    const words = regexMatcher('(\\w+\\s?)*$')(msg(`${'word '.repeat(20_000)}!`))
    expect(words).toHaveLength(1) // the empty match at the end
  })
})

describe('lengthMatcher', () => {
  it('passes texts of at most max code points', () => {
    expect(lengthMatcher(5)(msg('hello'))).toEqual([])
    expect(lengthMatcher(5)(msg('😀😀😀😀😀'))).toEqual([]) // 10 UTF-16 units, 5 code points
  })
  it('reports one finding naming the length in code points', () => {
    expect(lengthMatcher(4)(msg('😀😀😀😀😀', 2))).toEqual([
      { kind: 'length', source: 'messages', index: 2, start: 0, end: 5, text: null },
    ])
    expect(lengthMatcher(1)(msg('ab'))).toEqual([
      { kind: 'length', source: 'messages', index: 0, start: 0, end: 2, text: null },
    ])
  })
})
