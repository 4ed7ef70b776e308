import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  isAbaRouting,
  isItin,
  isMedicare,
  isNhsNumber,
  isNric,
} from '../../../src/rules/detectors/identity-numbers.js'
import { type PiiKind, piiMatcher } from '../../../src/rules/detectors/index.js'
import { piiPending } from '../../../src/rules/detectors/pending.js'
import { findPii } from '../../../src/rules/detectors/pii.js'
import { isWalletAddress } from '../../../src/rules/detectors/wallets.js'
import { msg } from './detector-helpers.js'

/**
 * The kinds of CONTRACT section 13, each confirmed the way its issuer defines it. Valid numbers
 * come from public test data (Presidio's recognizer tests, python-stdnum's, EIP-55's addresses);
 * each near miss is one of them with a wrong check digit or letter.
 */
const read = (kind: PiiKind, text: string) => piiMatcher([kind])(msg(text)).map((f) => f.text)

const VALID_AND_NEAR: Record<string, { kind: PiiKind; valid: string[]; near: string[] }> = {
  'Bitcoin base58check, bech32 and bech32m; Ethereum EIP-55': {
    kind: 'crypto_wallet',
    valid: [
      '16Yeky6GMjeNkAiNcBY7ZhrLoMSgg1BoyZ',
      '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy',
      'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
      'BC1QARDV855YJNGSPVXUTTQ897AQCA3LXJU2Y69JCE',
      'bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297',
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0xde709f2102306220921060314715629080e2fb77',
    ],
    near: [
      '16Yeky6GMjeNkAiNcBY7ZhrLoMSgg1BoyA',
      '1NEDqZPvTWRaoho48qXuLLsrYomMXPABfA',
      'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdp',
      'Bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
      // Witness version 1 in bech32, not bech32m (BIP 350).
      'bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7k7grplx',
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD',
    ],
  },
  'MAC addresses': {
    kind: 'mac_address',
    valid: ['00:1A:2B:3C:4D:5E', 'AA-BB-CC-DD-EE-FF', '0012.3456.789A', 'fe:54:00:76:07:0a'],
    near: [
      '00:1A:2B:3C:4D',
      '10:2F:33-AC-29-C3',
      'FF:FF:FF:FF:FF:FF',
      '00:00:00:00:00:00',
      'd0:50:99:84:a2:a0:ff',
    ],
  },
  'US ITIN': {
    kind: 'us_itin',
    valid: ['911-70-1234', '911-53-1234', '900 94 0000'],
    near: ['911-89-1234', '911-93-1234', '811-70-1234'],
  },
  'US ABA routing numbers (4-4-1)': {
    kind: 'us_bank_routing',
    valid: ['3222-7162-7', '0711-0130-7'],
    near: ['3222-7162-8', '1234-0000-0'],
  },
  'UK NINO': {
    kind: 'uk_nino',
    valid: ['AA 12 34 56 B', 'hh 01 02 03 d', 'tw987654a', 'PR 123612C'],
    near: ['AA 12 34 56 H', 'BG123612A', 'nt 99 88 77 a', 'UV 98 76 54 B', 'Aa 12 34 56 B'],
  },
  'ES NIF': {
    kind: 'es_nif',
    valid: ['55555555K', '55555555-K', '1111111G', '12345678z'],
    near: ['55555555J', '12345678a'],
  },
  'ES NIE': {
    kind: 'es_nie',
    valid: ['Z8078221M', 'X9613851N', 'Y8063915-Z', 'x9613851n'],
    near: ['Y8063915Q', 'W8063915Q', 'x9613851q'],
  },
  'IT codice fiscale': {
    kind: 'it_fiscal_code',
    valid: ['MRTNTN23M02D969P', 'RSSMRA45C12F20RX', 'RSSMRAQRCMNFNLRG', 'AAAAAA00B11C333Y'],
    near: ['FOXDRA26C24H872A', 'AAAAAA00B11C333N', 'CNTCHR83T32D969H'],
  },
  'IN PAN': {
    kind: 'in_pan',
    valid: ['ABCPD1234Z', 'AAKFD7113K', 'ABBPM4567S'],
    near: ['AAASA1111R', 'ABCPD0000Z', 'abcpd1234z'],
  },
  'IN Aadhaar (4-4-4)': {
    kind: 'in_aadhaar',
    valid: ['3123 4567 8909', '3998-7654-3211', '3123:4567:8909'],
    near: ['3123 4567 8908', '1234 5678 9012'],
  },
  'SG NRIC/FIN': {
    kind: 'sg_nric',
    valid: ['S2740116C', 'T7572225C', 'F2346401L', 'G1122144R', 'M4332674T', 'T1234567J'],
    near: ['S2740116D', 'T1234567Z', 'G1122144L', 'A1234567Z'],
  },
  'AU ABN (2-3-3-3)': {
    kind: 'au_abn',
    valid: ['51 824 753 556', '12 123 552 732'],
    near: ['52 824 753 556', '51 824 753 557'],
  },
  'AU Medicare (4-5-1)': {
    kind: 'au_medicare',
    valid: ['2123 45670 1', '2123 45670 1 2'],
    near: ['2123 25870 1', '7123 45670 1'],
  },
}

describe('each kind of section 13', () => {
  for (const [name, { kind, valid, near }] of Object.entries(VALID_AND_NEAR)) {
    it(`${name}: finds valid numbers in a sentence, not near misses`, () => {
      for (const v of valid) expect(read(kind, `the number ${v}, on file`), v).toEqual([v])
      for (const v of near) expect(read(kind, `the number ${v}, on file`), v).toEqual([])
    })
  }

  it('reads numbers whose only confirmation is a check digit only right after their cue', () => {
    const cued: [PiiKind, string, string, string][] = [
      ['us_itin', 'ITIN:', '911701234', '911891234'],
      ['us_bank_routing', 'routing number', '121000358', '121000359'],
      ['uk_nhs', 'NHS number', '943 476 5919', '943 476 5918'],
      ['uk_nhs', 'NHS no.', '401-023-2137', '401-023-2138'],
      ['pl_pesel', 'PESEL:', '44051401458', '44051401459'],
      ['in_aadhaar', 'Aadhaar number is', '400123456787', '400123456788'],
      ['au_tfn', 'tax file number', '876 543 210', '876 543 211'],
      ['au_abn', 'ABN', '51824753556', '52824753556'],
      ['au_medicare', 'Medicare card', '2123456701', '2123258701'],
    ]
    for (const [kind, cue, valid, wrong] of cued) {
      expect(read(kind, `${cue} ${valid}`), `${kind} ${valid}`).toEqual([valid])
      expect(read(kind, `${cue} ${wrong}`), `${kind} ${wrong}`).toEqual([])
      // The same number without its cue: an order number as likely.
      expect(read(kind, `order ${valid} shipped`), `${kind} ${valid} bare`).toEqual([])
    }
  })

  it('reads a date of birth only after a cue, and only a date that exists', () => {
    expect(read('date_of_birth', 'Date of birth: 12/03/1990')).toEqual(['12/03/1990'])
    expect(read('date_of_birth', 'DOB 1985-07-23, blood type A')).toEqual(['1985-07-23'])
    expect(read('date_of_birth', 'She was born on March 12th, 1990 in Leeds')).toEqual(['March 12th, 1990'])
    expect(read('date_of_birth', 'geboren am 12. März 1990')).toEqual(['12. März 1990'])
    expect(read('date_of_birth', 'fecha de nacimiento: 12 de marzo de 1990')).toEqual(['12 de marzo de 1990'])
    expect(read('date_of_birth', 'born 29 Feb 2000')).toEqual(['29 Feb 2000'])
    expect(read('date_of_birth', 'born 29 Feb 2001')).toEqual([])
    expect(read('date_of_birth', 'date of birth: 31/02/1990')).toEqual([])
    expect(read('date_of_birth', 'the invoice is dated 12/03/1990')).toEqual([])
    expect(read('date_of_birth', 'born in 1990')).toEqual([])
  })

  it('confirms by the issuers’ algorithms', () => {
    expect(isAbaRouting('121000358')).toBe(true)
    expect(isAbaRouting('421042111')).toBe(false)
    expect(isItin('900700000')).toBe(true)
    expect(isItin('900930000')).toBe(false)
    expect(isNhsNumber('9434765919')).toBe(true)
    // A remainder that gives 10 is never issued.
    expect(isNhsNumber('0000000600')).toBe(false)
    expect(isNric('S2740116C')).toBe(true)
    expect(isNric('M4332674T')).toBe(true)
    expect(isMedicare('2123456701')).toBe(true)
    expect(isWalletAddress('0x52908400098527886E0F7030069857D2E4169EE7')).toBe(true)
    expect(isWalletAddress('0x52908400098527886E0F7030069857D2E4169Ee7')).toBe(false)
  })

  it('reads no number glued to a longer run, and counts offsets in code points', () => {
    expect(read('us_itin', '1911-70-12345')).toEqual([])
    expect(read('sg_nric', 'XS2740116C')).toEqual([])
    expect(read('mac_address', '00:1A:2B:3C:4D:5E:6F')).toEqual([])
    const [finding] = piiMatcher(['sg_nric'])(msg('😀 S2740116C'))
    expect(finding).toMatchObject({ kind: 'sg_nric', start: 2, end: 11 })
  })

  it('holds back, in a streamed reply, only what may still become one', () => {
    const held = (kind: PiiKind, text: string) => text.slice(piiPending([kind])(text))
    expect(held('uk_nino', 'my NINO is AB 12 3')).toBe('AB 12 3')
    expect(held('uk_nino', 'my NINO is AB 12 34 56 C.')).toBe('')
    expect(held('crypto_wallet', 'pay 16Yeky6GMjeNkAi')).toBe('16Yeky6GMjeNkAi')
    expect(held('crypto_wallet', 'the order ships tomorrow')).toBe('')
    expect(held('mac_address', 'MAC 00:1A:2B:3C:4D:5E')).toBe('00:1A:2B:3C:4D:5E')
    expect(held('it_fiscal_code', 'codice RSSMRA45')).toBe('RSSMRA45')
    expect(held('it_fiscal_code', 'the weather is fine ')).toBe('')
    expect(held('pl_pesel', 'PESEL 440514')).toBe('440514')
    expect(held('date_of_birth', 'the national team played well and won')).toBe('')
    const dob = 'She was born on 12 Ma'
    expect(dob.endsWith(held('date_of_birth', dob)) && held('date_of_birth', dob).includes('12 Ma')).toBe(
      true,
    )
  })

  it('is among every kind of a rule that flags none in particular, and quiet on ordinary text', () => {
    const text =
      'Ticket 48213 closed at 10:30 on 2024-03-12; v1.2.3, 3 items, order 123456789, total 1,234.50.'
    expect(findPii(text, ['date_of_birth', 'us_bank_routing', 'us_itin'])).toEqual([])
    const all = piiMatcher(null)
    expect(all(msg(text))).toEqual([])
    expect(all(msg('my NINO is AB 12 34 56 C')).map((f) => f.kind)).toEqual(['uk_nino'])
  })
})

/**
 * The labelled cases bench/pii-kinds.mjs measures, held exactly: each case's findings of its
 * kind are the marked spans, in code points. A case marked `miss` is a known miss by design (a
 * number counted only after a cue, given bare), which must still miss.
 */
interface Case {
  kind: PiiKind
  text: string
  source: string
  note?: string
  miss?: string
}
const { cases } = JSON.parse(
  readFileSync(new URL('../../fixtures/pii-kinds.json', import.meta.url), 'utf8'),
) as {
  cases: Case[]
}
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

describe('the kinds of section 13 on their labelled cases', () => {
  const matchers = new Map<PiiKind, ReturnType<typeof piiMatcher>>()
  const spans = (kind: PiiKind, text: string) => {
    let matcher = matchers.get(kind)
    if (matcher === undefined) {
      matcher = piiMatcher([kind])
      matchers.set(kind, matcher)
    }
    return matcher(msg(text)).map((f): [number, number] => [f.start, f.end])
  }
  it('holds cases of every kind', () => {
    expect(new Set(cases.map((c) => c.kind)).size).toBe(17)
  })
  for (const c of cases) {
    const { text, spans: expected } = unmark(c.text)
    if (c.miss === undefined) {
      it(`${c.kind}: ${c.text}`, () => {
        expect(spans(c.kind, text)).toEqual(expected)
      })
    } else {
      it(`${c.kind}, a known miss (${c.miss}): ${c.text}`, () => {
        expect(spans(c.kind, text)).not.toEqual(expected)
      })
    }
  }
})
