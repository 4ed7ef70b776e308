import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { exactScrubber, secretScrubber } from '../../src/proxy/secrets.js'

const KEY = 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789'

/** Whether `text` still holds a run of 8 characters of `form`. */
const holdsRun = (text: string, form: string) => {
  for (let i = 0; i + 8 <= form.length; i++) if (text.includes(form.slice(i, i + 8))) return true
  return false
}

describe('secretScrubber', () => {
  const scrub = secretScrubber(KEY)

  it('redacts the key as is, cut at either end, split by white space, percent-encoded, base64 and hex', () => {
    const base64 = Buffer.from(KEY).toString('base64')
    const cases = [
      `Incorrect API key provided: ${KEY}.`,
      `key ${KEY.slice(0, 30)}`,
      `key ${KEY.slice(12)}`,
      `key ${KEY.slice(0, 10)}\n${KEY.slice(10, 25)} ${KEY.slice(25)}`,
      `key "${KEY.slice(0, 9)}", "${KEY.slice(9)}"`,
      `url ?key=${encodeURIComponent(`${KEY}+/`)}`,
      `basic ${base64}`,
      `basic ${Buffer.from(`user:${KEY}`).toString('base64')}`,
      `basic ${Buffer.from(`u:${KEY}`).toString('base64url')}`,
      `hex ${Buffer.from(KEY).toString('hex').toUpperCase()}`,
    ]
    for (const text of cases) {
      const out = scrub(text)
      expect(out, text).toContain('[REDACTED]')
      expect(holdsRun(out, KEY), out).toBe(false)
      expect(holdsRun(out, base64.slice(4, -4)), out).toBe(false)
    }
    // Fewer than 8 characters in a row say too little to rebuild a key: a provider's mask stays.
    expect(scrub('Incorrect API key provided: sk-p****6789.')).toBe(
      'Incorrect API key provided: sk-p****6789.',
    )
  })

  it('keeps every other character where it was', () => {
    expect(scrub(`before ${KEY} after`)).toBe('before [REDACTED] after')
    expect(scrub('nothing to hide here, at all')).toBe('nothing to hide here, at all')
    expect(secretScrubber(null)(KEY)).toBe(KEY)
  })

  it('leaves no 8 characters of the key in any text that embeds it, whole or in pieces', () => {
    const key = fc.string({
      unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_'),
      minLength: 20,
      maxLength: 60,
    })
    fc.assert(
      fc.property(
        key,
        fc.string(),
        fc.string(),
        fc.array(fc.nat(), { maxLength: 4 }),
        (secret, before, after, cuts) => {
          const points = [...new Set(cuts.map((c) => c % secret.length))].sort((a, b) => a - b)
          const pieces: string[] = []
          let from = 0
          for (const at of points) {
            pieces.push(secret.slice(from, at))
            from = at
          }
          pieces.push(secret.slice(from))
          const out = secretScrubber(secret)(`${before}${pieces.join(' ')}${after}`)
          const compact = out.replace(/\s/g, '')
          for (let i = 0; i + 8 <= secret.length; i++)
            if (
              compact.includes(secret.slice(i, i + 8)) &&
              !`${before}${after}`.replace(/\s/g, '').includes(secret.slice(i, i + 8))
            )
              return false
          return true
        },
      ),
    )
  })
})

describe('exactScrubber', () => {
  it('replaces the key and its encoded forms in a whole reply', () => {
    const scrub = exactScrubber(KEY)
    const base64 = Buffer.from(KEY).toString('base64')
    const reply = JSON.stringify({ content: `echo ${KEY} and ${base64}` })
    const out = scrub(reply)
    expect(out).not.toContain(KEY)
    expect(out).not.toContain(base64.slice(0, 40))
    expect(JSON.parse(out).content).toMatch(/^echo \[REDACTED\] and \[REDACTED\].{0,3}$/)
  })
})
