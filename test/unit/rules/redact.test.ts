import { describe, expect, it } from 'vitest'
import { keywordsMatcher, piiMatcher, redactText } from '../../../src/rules/detectors/index.js'
import type { Finding } from '../../../src/rules/types.js'
import { msg } from './detector-helpers.js'

const at = (kind: Finding['kind'], start: number, end: number): Finding => ({
  kind,
  source: 'messages',
  index: 0,
  start,
  end,
  text: null,
})

describe('redactText', () => {
  it('replaces each finding with its kind in capitals', () => {
    const text = 'My card is 4111 1111 1111 1111, can I get a refund?'
    const findings = piiMatcher(null)(msg(text))
    expect(redactText(text, findings)).toBe('My card is [CREDIT_CARD], can I get a refund?')
  })
  it('labels every pii kind as section 8 lists them', () => {
    const text =
      'call +44 20 7946 0958, pay DE89 3704 0044 0532 0130 00, SSN 123-45-6789, mail a@example.com, host 10.0.0.1'
    expect(redactText(text, piiMatcher(null)(msg(text)))).toBe(
      'call [PHONE], pay [IBAN], SSN [SSN], mail [EMAIL], host [IP_ADDRESS]',
    )
  })
  it('merges overlapping and touching findings into one replacement', () => {
    expect(redactText('abcdefghij', [at('keyword', 2, 5), at('regex', 4, 7)])).toBe('ab[KEYWORD]hij')
    expect(redactText('abcdefghij', [at('regex', 5, 8), at('email', 2, 5)])).toBe('ab[EMAIL]ij')
    expect(redactText('abcdefghij', [at('regex', 1, 3), at('ip_address', 1, 6), at('ssn', 2, 4)])).toBe(
      'a[IP_ADDRESS]ghij',
    )
    expect(redactText('abc', [])).toBe('abc')
  })
  it('reads offsets as code points', () => {
    const text = '😀😀 café 😀 CAFÉ!'
    const findings = keywordsMatcher(['café'])(msg(text))
    expect(redactText(text, findings)).toBe('😀😀 [KEYWORD] 😀 [KEYWORD]!')
    expect(redactText('𝒜𝒷𝒸𝒹', [at('regex', 1, 3)])).toBe('𝒜[REGEX]𝒹')
  })
  it('combines findings of several rules', () => {
    const text = 'mail ann@example.com about Project Zeus'
    const findings = [...keywordsMatcher(['project zeus'])(msg(text)), ...piiMatcher(['email'])(msg(text))]
    expect(redactText(text, findings)).toBe('mail [EMAIL] about [KEYWORD]')
  })
})
