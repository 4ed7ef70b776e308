import { describe, expect, it } from 'vitest'
import { bucketize, stepName } from '../../console/src/chart.js'
import { codePointToUtf16, diffLines, highlightSegments, stableJson } from '../../console/src/text.js'

describe('the console: code point offsets', () => {
  it('maps code points to UTF-16 units across astral characters', () => {
    // '😀' is one code point and two UTF-16 units.
    expect(codePointToUtf16('a😀b')).toEqual([0, 1, 3, 4])
    expect(codePointToUtf16('')).toEqual([0])
  })

  it('highlights the text a finding names, whatever comes before it', () => {
    const text = '😀 My card is 4111 1111 1111 1111, ok'
    // Offsets as the API counts them (code points): the emoji counts once.
    const start = [...'😀 My card is '].length
    const segments = highlightSegments(text, [{ start, end: start + 19, tag: 'card' }])
    expect(segments).toEqual([
      { text: '😀 My card is ', tags: [] },
      { text: '4111 1111 1111 1111', tags: ['card'] },
      { text: ', ok', tags: [] },
    ])
  })

  it('splits overlapping findings so each piece carries every finding covering it', () => {
    const segments = highlightSegments('abcdef', [
      { start: 1, end: 4, tag: 'x' },
      { start: 3, end: 5, tag: 'y' },
    ])
    expect(segments).toEqual([
      { text: 'a', tags: [] },
      { text: 'bc', tags: ['x'] },
      { text: 'd', tags: ['x', 'y'] },
      { text: 'e', tags: ['y'] },
      { text: 'f', tags: [] },
    ])
  })

  it('clamps offsets past the end and drops empty spans', () => {
    expect(
      highlightSegments('ab', [
        { start: 1, end: 99, tag: 1 },
        { start: 2, end: 2, tag: 2 },
      ]),
    ).toEqual([
      { text: 'a', tags: [] },
      { text: 'b', tags: [1] },
    ])
    expect(highlightSegments('', [])).toEqual([{ text: '', tags: [] }])
  })
})

describe('the console: revision differences', () => {
  it('pairs a changed line side by side and keeps the rest aligned', () => {
    const rows = diffLines('a\nb\nc', 'a\nB\nc\nd')
    expect(rows.map((r) => [r.kind, r.left, r.right])).toEqual([
      ['same', 'a', 'a'],
      ['changed', 'b', 'B'],
      ['same', 'c', 'c'],
      ['added', null, 'd'],
    ])
    expect(rows[3]?.rightNumber).toBe(4)
  })

  it('shows removed lines on the left only', () => {
    expect(diffLines('a\nb', 'b').map((r) => [r.kind, r.left, r.right])).toEqual([
      ['removed', 'a', null],
      ['same', 'b', 'b'],
    ])
  })

  it('prints records with sorted keys, so key order never shows as a change', () => {
    expect(stableJson({ b: 1, a: { d: 2, c: [3] } })).toBe(stableJson({ a: { c: [3], d: 2 }, b: 1 }))
  })
})

describe('the console: the log chart', () => {
  it('puts a burst of evaluations in one bucket among at least twelve', () => {
    const t = 1_795_366_260 // a whole minute
    const { step, buckets } = bucketize([
      { created: t, verdict: 'fail' },
      { created: t + 5, verdict: 'pass' },
      { created: t + 59, verdict: 'fail' },
    ])
    expect(step).toBe(60)
    expect(buckets).toHaveLength(12)
    expect(buckets[11]).toEqual({ start: t, pass: 1, fail: 2 })
    expect(buckets.slice(0, 11).every((b) => b.pass + b.fail === 0)).toBe(true)
  })

  it('picks a round bucket size that keeps a long span within about 48 bars', () => {
    const day = 86_400
    const start = 1_795_305_600 // midnight UTC
    const entries = Array.from({ length: 30 }, (_, i) => ({ created: start + i * day, verdict: 'pass' }))
    const { step, buckets } = bucketize(entries)
    expect(step).toBe(day)
    expect(buckets).toHaveLength(30)
    expect(buckets.reduce((n, b) => n + b.pass, 0)).toBe(30)
    expect(stepName(step)).toBe('day')
    expect(bucketize([]).buckets).toEqual([])
  })
})
