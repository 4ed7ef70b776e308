import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Restorer, replaceSpans, restoreText } from '../../../src/rules/masking.js'

const VALUES = new Map([
  ['[EMAIL_1]', 'jane@example.com'],
  ['[EMAIL_12]', 'bob@example.org'],
  ['[PROJECT_1]', 'Acme "Falcon"'],
])

describe('putting placeholders back', () => {
  it('restores issued placeholders and leaves any other bracketed text alone', () => {
    expect(restoreText('To [EMAIL_1], cc [EMAIL_12], not [EMAIL_2] or [x].', VALUES)).toBe(
      'To jane@example.com, cc bob@example.org, not [EMAIL_2] or [x].',
    )
    // Inside a JSON string, escaped.
    const args = `{"p": "${restoreText('[PROJECT_1]', VALUES, true)}"}`
    expect(JSON.parse(args)).toEqual({ p: 'Acme "Falcon"' })
  })

  it('gives, streamed, exactly what it gives whole, however the text is cut, and never a piece of a placeholder', () => {
    const text = 'Hi [EMAIL_1]! Write [EMAIL_12] and [PROJECT_1]; [EMAIL_9] stays, [ too.'
    fc.assert(
      fc.property(fc.array(fc.nat({ max: text.length }), { maxLength: 20 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b)
        const restorer = new Restorer(VALUES)
        let out = ''
        let from = 0
        for (const cut of [...points, text.length]) {
          const piece = restorer.push(text.slice(from, cut))
          // What leaves never ends inside an issued placeholder.
          expect(/\[(E|EM|EMA|EMAI|EMAIL|EMAIL_|EMAIL_1|P\w*)$/.test(piece)).toBe(false)
          out += piece
          from = cut
        }
        out += restorer.end()
        expect(out).toBe(restoreText(text, VALUES))
      }),
    )
  })

  it('replaces spans counted in code points, astral characters before them included', () => {
    const text = '😀 mail jane@example.com now'
    expect(replaceSpans(text, [{ start: 7, end: 23, placeholder: 0 }], () => '[EMAIL_1]')).toBe(
      '😀 mail [EMAIL_1] now',
    )
  })
})
