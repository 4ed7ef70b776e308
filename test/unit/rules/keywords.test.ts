import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fold, foldTarget, originalEnd, originalStart } from '../../../src/rules/detectors/fold.js'
import { keywordsMatcher } from '../../../src/rules/detectors/index.js'
import { PhraseSet } from '../../../src/rules/detectors/phrase-set.js'
import { cpSlice, msg } from './detector-helpers.js'

const find = (phrases: string[], text: string) => keywordsMatcher(phrases)(msg(text))
const spans = (phrases: string[], text: string) => find(phrases, text).map((f) => [f.start, f.end, f.text])

describe('keywordsMatcher', () => {
  it('matches whole words case-insensitively after NFKC and case folding', () => {
    expect(spans(['café'], 'CAFÉ au lait')).toEqual([[0, 4, 'CAFÉ']])
    expect(spans(['café'], 'two cafés please')).toEqual([])
    expect(spans(['cat'], 'concatenate the cat, Cat and CAT.')).toEqual([
      [16, 19, 'cat'],
      [21, 24, 'Cat'],
      [29, 32, 'CAT'],
    ])
  })
  it('uses Unicode word boundaries, not ASCII ones', () => {
    expect(spans(['über'], 'Übermensch')).toEqual([]) // \b would see a boundary before Ü
    expect(spans(['naïve'], 'so naïve!')).toEqual([[3, 8, 'naïve']])
    expect(spans(['東京'], '東京タワー')).toEqual([]) // a letter follows
    expect(spans(['東京'], '行き先: 東京。')).toEqual([[5, 7, '東京']])
  })
  it('maps offsets back to the original through full-width letters, ligatures and decomposed accents', () => {
    expect(spans(['CAFÉ'], 'ＣＡＦÉ open')).toEqual([[0, 4, 'ＣＡＦÉ']])
    expect(spans(['finance'], 'the ﬁnance team')).toEqual([[4, 10, 'ﬁnance']])
    const decomposed = 'un cafe\u0301 noir'
    const [f] = find(['café'], decomposed)
    expect(f).toMatchObject({ start: 3, end: 8, text: 'cafe\u0301' })
    expect(cpSlice(decomposed, f?.start ?? 0, f?.end ?? 0)).toBe('cafe\u0301')
    expect(spans(['cafe\u0301'], 'CAFÉ')).toEqual([[0, 4, 'CAFÉ']]) // decomposed phrase, composed text
  })
  it('folds ß and ſ the way case folding does', () => {
    expect(spans(['strasse'], 'Hauptstraße 5, STRASSE')).toEqual([[15, 22, 'STRASSE']])
    expect(spans(['straße'], 'die Strasse')).toEqual([[4, 11, 'Strasse']])
    expect(spans(['sister'], 'ſiſter')).toEqual([[0, 6, 'ſiſter']])
  })
  it('lets a space in a phrase match any run of whitespace', () => {
    expect(spans(['credit card'], 'my credit \n\t card number')).toEqual([[3, 17, 'credit \n\t card']])
    expect(spans(['credit card'], 'creditcard')).toEqual([])
  })
  it('counts code points with astral characters before a match', () => {
    expect(spans(['secret'], '🔥🔥 top SECRET')).toEqual([[7, 13, 'SECRET']])
  })
  it('reports one finding per occurrence, leftmost and longest first, never overlapping', () => {
    expect(spans(['new york', 'york', 'new'], 'New York and york')).toEqual([
      [0, 8, 'New York'],
      [13, 17, 'york'],
    ])
    expect(spans(['a b', 'b c'], 'a b c')).toEqual([[0, 3, 'a b']])
  })
  it('treats phrases as literals, never as patterns', () => {
    expect(spans(['a.c', '(x)'], 'abc a.c (x)')).toEqual([
      [4, 7, 'a.c'],
      [8, 11, '(x)'],
    ])
    expect(spans(['  ', ''], 'anything')).toEqual([])
  })
  it('copies source and index', () => {
    const [f] = keywordsMatcher(['x'])({ source: 'context', index: 4, role: 'context', text: 'x' })
    expect(f).toEqual({ kind: 'keyword', source: 'context', index: 4, start: 0, end: 1, text: 'x' })
  })
  it('stays linear on adversarial phrases and texts', () => {
    // Every phrase shares a long prefix with the text; an alternation regex would retry each
    // phrase at every position.
    const phrases = Array.from({ length: 1000 }, (_, i) => `${'a '.repeat(100)}${i}`)
    const text = 'a '.repeat(50_000)
    expect(keywordsMatcher(phrases)(msg(text))).toEqual([])
    const nested = Array.from({ length: 200 }, (_, i) => 'a'.repeat(i + 1))
    const found = keywordsMatcher(nested)(msg('a'.repeat(100_000)))
    expect(found).toEqual([])
    const words = keywordsMatcher(nested)(msg('aa '.repeat(30_000)))
    expect(words).toHaveLength(30_000)
    expect(words[1]).toMatchObject({ start: 3, end: 5, text: 'aa' })
  })
})

describe('foldTarget', () => {
  it('folds a text of an evaluation once for every rule that reads it, and again when it changes', () => {
    const target = msg('Ｃafé')
    const folded = foldTarget(target)
    expect(folded.text).toBe('café')
    expect(foldTarget(target)).toBe(folded)
    target.text = 'NEW'
    expect(foldTarget(target).text).toBe('new')
  })
})

describe('fold', () => {
  it('folds ASCII text as the general path does, offsets included', () => {
    // A trailing "é" sends the same text down the general path; the first units must agree.
    const ascii = fc.string({
      unit: fc.oneof(
        fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)),
        fc.constantFrom(' ', '\n', '\t', '\r\n', '  '),
      ),
    })
    fc.assert(
      fc.property(ascii, (text) => {
        const fast = fold(text)
        expect(fast.start).toBeUndefined()
        const general = fold(`${text}é`)
        expect(general.text).toBe(`${fast.text}é`)
        for (let i = 0; i < fast.text.length; i++) {
          expect([originalStart(general, i), originalEnd(general, i)]).toEqual([
            originalStart(fast, i),
            originalEnd(fast, i),
          ])
        }
      }),
      { numRuns: 300 },
    )
  })

  it('maps a whitespace run back to the whole run', () => {
    const folded = fold('Wire \n\t Transfer')
    expect(folded.text).toBe('wire transfer')
    expect([originalStart(folded, 4), originalEnd(folded, 4)]).toEqual([4, 8])
    expect(originalStart(folded, 5)).toBe(8)
  })
})

describe('PhraseSet', () => {
  it('finds the same whole words through its table and, for a set too large for one, its links', () => {
    const phrases = ['wire transfer', 'wire', 'transfer', 'ïnternal', 'api key']
    // 1,000 phrases of 256 CJK characters: more nodes × character classes than a table may hold.
    const large = Array.from({ length: 1000 }, (_, i) =>
      Array.from({ length: 256 }, (_, j) => String.fromCharCode(0x4e00 + ((i * 256 + j) % 3000))).join(''),
    )
    const text = 'a wire transfer, wire-transfer, ïnternal api key; wiretransfer and api  key'
    const small = new PhraseSet(phrases)
    const big = new PhraseSet([...phrases, ...large])
    expect((big as unknown as { table: unknown }).table).toBeNull()
    expect((small as unknown as { table: unknown }).table).not.toBeNull()
    const hits = small.search(text)
    expect(hits.map((h) => text.slice(h.start, h.end))).toEqual([
      'wire transfer',
      'wire',
      'transfer',
      'ïnternal',
      'api key',
    ])
    expect(big.search(text)).toEqual(hits)
  })
})

describe('the ASCII path', () => {
  // searchAscii reads an ASCII text as folding would see it: its matches must be those of
  // folding the text and searching the folded text, for any phrases.
  const words = ['wire', 'transfer', 'api', 'key', 'a', 'ab', 'b', 'x1', 'é', "don't", 'c++']
  const phrase = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 3 }).map((ws) => ws.join(' '))
  const piece = fc.oneof(
    fc.constantFrom(...words),
    fc.constantFrom('WIRE', 'Wire', 'TRANSFER', 'Api', 'KEY', 'A', 'AB', 'X1'),
    fc.constantFrom(' ', '  ', '\t', '\n', '\r\n', ' \t ', '\v', '\f'),
    fc.constantFrom('-', '.', ',', '_', "'", '0', '9', '+', '\u0000'),
    fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)),
  )
  const space = fc.constantFrom(' ', '  ', '\t', '\n', '\r\n', ' \t ', '\v', '\f')
  // A phrase as a text may write it: any letter in capitals, any space a run of whitespace.
  const written = (p: string) =>
    fc
      .tuple(
        fc.array(fc.boolean(), { minLength: p.length, maxLength: p.length }),
        fc.array(space, { minLength: p.length, maxLength: p.length }),
      )
      .map(([upper, spaces]) =>
        [...p].map((c, k) => (c === ' ' ? spaces[k] : upper[k] ? c.toUpperCase() : c)).join(''),
      )
  const phrasesAndText = fc.array(phrase, { minLength: 1, maxLength: 6 }).chain((phrases) =>
    fc.tuple(
      fc.constant(phrases),
      fc
        .array(fc.oneof(piece, fc.constantFrom(...phrases).chain(written)), { maxLength: 30 })
        .map((ps) => ps.join('')),
    ),
  )
  it('finds what folding and searching find, on random ASCII texts and phrases', () => {
    fc.assert(
      fc.property(phrasesAndText, ([phrases, t]) => {
        expect(keywordsMatcher(phrases)(msg(t))).toEqual(keywordsMatcher(phrases, false)(msg(t)))
      }),
      { numRuns: 3000 },
    )
  })
  it('finds what folding and searching find for the deepest phrases, whose starts the ring must still hold', () => {
    const long = 'a b '.repeat(40).trim()
    const t = `x ${'A  B\t'.repeat(45)} y`
    expect(keywordsMatcher([long, 'b'])(msg(t))).toEqual(keywordsMatcher([long, 'b'], false)(msg(t)))
    expect(keywordsMatcher([long])(msg(t))).toHaveLength(1)
  })
})
