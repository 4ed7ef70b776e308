import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { type PiiKind, piiMatcher } from '../../../src/rules/detectors/index.js'
import { msg } from './detector-helpers.js'

/**
 * The labelled cases bench/pii-quality.mjs measures, held exactly: each case's findings of its
 * kind are the marked spans, in code points. A case marked `miss` is a known miss, and says why;
 * it must still miss, so that fixing one updates the list and the figures with it.
 */
interface Case {
  kind: PiiKind
  text: string
  source: 'presidio' | 'warden'
  note?: string
  miss?: string
}
const { cases } = JSON.parse(
  readFileSync(new URL('../../fixtures/pii-quality.json', import.meta.url), 'utf8'),
) as { cases: Case[] }

/** The text without its ⟦ ⟧ markers, and the marked spans in code points. */
function unmark(marked: string): { text: string; spans: [number, number][] } {
  let text = ''
  let at = 0
  let start = -1
  const spans: [number, number][] = []
  for (const c of marked) {
    if (c === '\u27e6') start = at
    else if (c === '\u27e7') spans.push([start, at])
    else {
      text += c
      at++
    }
  }
  return { text, spans }
}

describe('the pii detector on its labelled cases', () => {
  const matchers = new Map<PiiKind, ReturnType<typeof piiMatcher>>()
  const read = (kind: PiiKind, text: string) => {
    let matcher = matchers.get(kind)
    if (matcher === undefined) {
      matcher = piiMatcher([kind])
      matchers.set(kind, matcher)
    }
    return matcher(msg(text)).map((f): [number, number] => [f.start, f.end])
  }

  it('holds a few hundred cases of every kind it measures', () => {
    const kinds = new Set(cases.map((c) => c.kind))
    expect([...kinds].sort()).toEqual(['credit_card', 'email', 'iban', 'ip_address', 'phone', 'ssn'])
    expect(cases.length).toBeGreaterThan(600)
  })
  for (const c of cases) {
    const { text, spans } = unmark(c.text)
    if (c.miss === undefined) {
      it(`${c.kind}: ${c.text}`, () => {
        expect(read(c.kind, text)).toEqual(spans)
      })
    } else {
      it(`${c.kind}, a known miss (${c.miss}): ${c.text}`, () => {
        expect(read(c.kind, text)).not.toEqual(spans)
      })
    }
  }
})
