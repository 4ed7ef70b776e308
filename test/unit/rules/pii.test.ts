import fc from 'fast-check'
import { getExampleNumber } from 'libphonenumber-js/max'
import examples from 'libphonenumber-js/mobile/examples'
import isEmailModule from 'validator/lib/isEmail.js'
import { describe, expect, it } from 'vitest'
import { PII_KINDS, piiMatcher } from '../../../src/rules/detectors/index.js'
import { CUE_REGIONS } from '../../../src/rules/detectors/phone-cues.js'
import { findPii, IPV4_CANDIDATE, possibleKinds } from '../../../src/rules/detectors/pii.js'
import { cpSlice, msg } from './detector-helpers.js'

const all = piiMatcher(null)
const only = (kind: Parameters<typeof piiMatcher>[0] extends readonly (infer K)[] | null ? K : never) =>
  piiMatcher([kind])
const texts = (text: string, kind = only('credit_card')) => kind(msg(text)).map((f) => f.text)

describe('credit cards', () => {
  const cards = only('credit_card')
  it('finds Luhn-valid numbers of known issuers, with spaces, dashes or none', () => {
    expect(texts('card 4111 1111 1111 1111 thanks', cards)).toEqual(['4111 1111 1111 1111'])
    expect(texts('mc 5500-0000-0000-0004.', cards)).toEqual(['5500-0000-0000-0004'])
    expect(texts('amex 378282246310005', cards)).toEqual(['378282246310005'])
    expect(texts('amex 3782 822463 10005', cards)).toEqual(['3782 822463 10005'])
    expect(texts('mc 2-series 2221000000000009', cards)).toEqual(['2221000000000009'])
    expect(texts('discover 6011111111111117, jcb 3530111333300000', cards)).toEqual([
      '6011111111111117',
      '3530111333300000',
    ])
    expect(texts('diners 30569309025904 unionpay 6200000000000005', cards)).toEqual([
      '30569309025904',
      '6200000000000005',
    ])
  })
  it('rejects a wrong check digit, an unknown issuer and digits glued to words', () => {
    expect(texts('4111111111111112', cards)).toEqual([])
    expect(texts('9111111111111111', cards)).toEqual([]) // no network's range holds 911
    expect(texts('1234567812345670', cards)).toEqual([]) // Luhn-valid, no issuer
    expect(texts('id4111111111111111', cards)).toEqual([])
  })
  it('finds the networks beyond the big four: UATP, Dankort, RuPay, Elo, Troy, Verve and others', () => {
    for (const [network, number] of [
      ['UATP', '122000000000003'],
      ['UATP in 4-5-6 groups', '1220 12345 678906'],
      ['Dankort', '5019717010103742'],
      ['Dankort', '5019 1234 5678 9013'],
      ['RuPay 60', '6074 1234 5678 9013'],
      ['RuPay 508', '5081 1234 5678 9016'],
      ['RuPay 82', '8201 1234 5678 9015'],
      ['Elo', '5067 1234 5678 9014'],
      ['Elo 509', '5090 1234 5678 9015'],
      ['Hipercard', '6062 1234 5678 9017'],
      ['Troy', '9792 1234 5678 9018'],
      ['Verve', '5061 1234 5678 9010'],
      ['UnionPay 81', '8171 1234 5678 9011'],
      ['InterPayment', '6360 1234 5678 9016'],
      ['InstaPayment', '6371 1234 5678 9013'],
      ['UzCard', '8600 1234 5678 9012'],
      ['Humo', '9860 1234 5678 9015'],
      ['Napas, 19 digits', '9704 1234 5678 9012 345'],
      ['Maestro UK', '6767 7012 3456 7892'],
    ]) {
      expect(texts(`${network}: ${number}.`, cards), network).toEqual([number])
    }
  })
  it('holds the added networks to their lengths and check digits', () => {
    expect(texts('122000000000004', cards)).toEqual([]) // UATP, wrong check digit
    expect(texts('1220000000000000003', cards)).toEqual([]) // a 1 with 19 digits
    expect(texts('5019 1234 5678 9014', cards)).toEqual([]) // Dankort, wrong check digit
    expect(texts('5019 1234 5678 901', cards)).toEqual([]) // Dankort, 15 digits
    expect(texts('9792 1234 5678 9012 3', cards)).toEqual([]) // Troy, 17 digits
    expect(texts('7123 1234 5678 9012', cards)).toEqual([]) // Luhn-valid, no network starts with 7
    expect(texts('0123 1234 5678 9017', cards)).toEqual([]) // nor with 0
  })
  it('counts code points before a card of an added network', () => {
    const text = '😀 Dankort 5019 1234 5678 9013'
    const [f] = cards(msg(text))
    expect(f).toMatchObject({ start: 10, end: 29, text: '5019 1234 5678 9013' })
    expect(cpSlice(text, f?.start ?? 0, f?.end ?? 0)).toBe('5019 1234 5678 9013')
  })
  it('reads no card in a longer run of digits joined by dots or colons', () => {
    expect(texts('amount 4111111111111111.25', cards)).toEqual([])
    expect(texts('build 1.4111111111111111 and 10:4111111111111111', cards)).toEqual([])
    expect(texts('card:4111111111111111, expires 12.2030.', cards)).toEqual(['4111111111111111'])
    expect(texts('It is 4111 1111 1111 1111.', cards)).toEqual(['4111 1111 1111 1111'])
  })
  it('finds the card inside a longer run of digit groups', () => {
    expect(texts('order 12 4111 1111 1111 1111 2024', cards)).toEqual(['4111 1111 1111 1111'])
  })
  it('reads no card in the digits of a valid IBAN', () => {
    // 2600 0560 1001 6113 is a Luhn-valid Mastercard number.
    expect(texts('2600 0560 1001 6113', cards)).toEqual(['2600 0560 1001 6113'])
    expect(texts('IBAN RS35 2600 0560 1001 6113 79', cards)).toEqual([])
    expect(texts('iban rs35-2600-0560-1001-6113-79.', cards)).toEqual([])
    // An invalid IBAN does not hide the card, nor does a valid one elsewhere in the text.
    expect(texts('RS35 2600 0560 1001 6113 70', cards)).toEqual(['2600 0560 1001 6113'])
    expect(texts('RS35 2600 0560 1001 6113 79 and card 4111 1111 1111 1111', cards)).toEqual([
      '4111 1111 1111 1111',
    ])
    expect(all(msg('RS35 2600 0560 1001 6113 79')).map((f) => [f.kind, f.text])).toEqual([
      ['iban', 'RS35 2600 0560 1001 6113 79'],
    ])
  })
  it('counts offsets in code points: astral characters before the card', () => {
    const text = '😀😀 my card 4111 1111 1111 1111'
    const [f] = cards(msg(text, 3))
    expect(f).toEqual({
      kind: 'credit_card',
      source: 'messages',
      index: 3,
      start: 11, // UTF-16 would say 13
      end: 30,
      text: '4111 1111 1111 1111',
    })
    expect(cpSlice(text, f?.start ?? 0, f?.end ?? 0)).toBe('4111 1111 1111 1111')
  })
  it('reads groups joined by commas in a card’s grouping, as a whole list after a card word', () => {
    expect(texts('card 4111,1111,1111,1111 exp 12/27', cards)).toEqual(['4111,1111,1111,1111'])
    expect(texts('Visa: 4111,1111,1111,1111', cards)).toEqual(['4111,1111,1111,1111'])
    expect(texts('amex 3782,822463,10005; diners card 3056,930902,5904', cards)).toEqual([
      '3782,822463,10005',
      '3056,930902,5904',
    ])
    expect(texts('カード 4111,1111,1111,1111', cards)).toEqual(['4111,1111,1111,1111'])
    // Spaces or dashes after a comma-joined number stay separators of their own.
    expect(texts('cards 5,4111 1111 1111 1111', cards)).toEqual(['4111 1111 1111 1111'])
  })
  it('reads no card in an ordinary list of numbers joined by commas', () => {
    // No card word: a bare list of four four-digit numbers makes a card one time in thirty.
    expect(texts('4111,1111,1111,1111', cards)).toEqual([])
    expect(texts('codes: 4111,1111,1111,1111', cards)).toEqual([])
    // Part of a longer list, in another grouping, an amount, mixed separators, a prose list.
    expect(texts('card 4111,1111,1111,1111,2222', cards)).toEqual([])
    expect(texts('card 12,4111,1111,1111,1111', cards)).toEqual([])
    expect(texts('card 41,1111,1111,1111,11', cards)).toEqual([])
    expect(texts('card total 4,111,111,111,111,111', cards)).toEqual([])
    expect(texts('card 4111,1111 1111,1111', cards)).toEqual([])
    expect(texts('card 4111, 1111, 1111, 1111', cards)).toEqual([])
    expect(texts('card 4111,1111,1111,1111.50', cards)).toEqual([])
  })
})

describe('text read in NFKC', () => {
  it('reads full-width digits and separators as a reader does, with offsets in the text as sent', () => {
    const text = '😀 カード ４１１１ １１１１ １１１１ １１１１。'
    expect(only('credit_card')(msg(text))).toEqual([
      {
        kind: 'credit_card',
        source: 'messages',
        index: 0,
        start: 6,
        end: 25,
        text: '４１１１ １１１１ １１１１ １１１１',
      },
    ])
    expect(texts('４１１１－１１１１－１１１１－１１１１')).toEqual([
      '４１１１－１１１１－１１１１－１１１１',
    ])
    expect(texts('4111\u00a01111\u00a01111\u00a01111')).toEqual(['4111\u00a01111\u00a01111\u00a01111'])
    expect(texts('mail ａｌｉｃｅ＠ｅｘａｍｐｌｅ．ｃｏｍ now', only('email'))).toEqual([
      'ａｌｉｃｅ＠ｅｘａｍｐｌｅ．ｃｏｍ',
    ])
    expect(texts('call ＋４４ ２０ ７９４６ ０９５８', only('phone'))).toEqual([
      '＋４４ ２０ ７９４６ ０９５８',
    ])
    expect(texts('SSN １２３－４５－６７８９', only('ssn'))).toEqual(['１２３－４５－６７８９'])
    expect(texts('at １９２．１６８．１．１０', only('ip_address'))).toEqual(['１９２．１６８．１．１０'])
  })
  it('reads a character NFKC expands or composes as the span of its source', () => {
    // U+2474 ⑴ reads as "(1)"; e + U+0301 composes: offsets still count in the text as sent.
    const text = 'e\u0301 ⑴ card ４１１１ １１１１ １１１１ １１１１'
    const [f] = only('credit_card')(msg(text))
    expect(f?.start).toBe(10)
    expect(cpSlice(text, f?.start ?? 0, f?.end ?? 0)).toBe('４１１１ １１１１ １１１１ １１１１')
  })
  it('reads text NFKC leaves alone as it is', () => {
    expect(texts('café 4111 1111 1111 1111')).toEqual(['4111 1111 1111 1111'])
    expect(texts('x² + y² = 4111')).toEqual([])
  })
})

describe('IBAN', () => {
  const ibans = only('iban')
  it('accepts good check digits in print and electronic format', () => {
    expect(texts('pay GB82 WEST 1234 5698 7654 32 today', ibans)).toEqual(['GB82 WEST 1234 5698 7654 32'])
    expect(texts('DE89370400440532013000', ibans)).toEqual(['DE89370400440532013000'])
    expect(texts('FR1420041010050500013M02606', ibans)).toEqual(['FR1420041010050500013M02606'])
  })
  it('rejects an altered digit or check digits', () => {
    expect(texts('GB82 WEST 1234 5698 7654 33', ibans)).toEqual([])
    expect(texts('DE88370400440532013000', ibans)).toEqual([])
    expect(texts('DE8937040044053201300', ibans)).toEqual([]) // one digit short
  })
  it('cuts a candidate to its country length when a number follows', () => {
    expect(texts('DE89 3704 0044 0532 0130 00 1234', ibans)).toEqual(['DE89 3704 0044 0532 0130 00'])
    expect(texts('VG96 VPVG 0000 0123 4567 8901 X in a sentence', ibans)).toEqual([
      'VG96 VPVG 0000 0123 4567 8901',
    ])
  })
  it('never cuts inside a group', () => {
    expect(texts('GB82 WEST 1234 5698 7654 3299', ibans)).toEqual([])
    expect(texts('DE89370400440532013000EUR', ibans)).toEqual([])
  })
  it('reads groups separated by dashes', () => {
    expect(texts('IBAN: DE89-3704-0044-0532-0130-00.', ibans)).toEqual(['DE89-3704-0044-0532-0130-00'])
    expect(texts('AL47-2121-1009-0000-0002-3569-8741', ibans)).toEqual(['AL47-2121-1009-0000-0002-3569-8741'])
    expect(texts('AL47/2121/1009/0000/0002/3569/8741', ibans)).toEqual([])
    expect(texts('DE89-3704-0044-0532-0130-01', ibans)).toEqual([])
  })
  it('reads an IBAN typed all in lower case, not one in mixed case', () => {
    expect(texts('pay de89 3704 0044 0532 0130 00 today', ibans)).toEqual(['de89 3704 0044 0532 0130 00'])
    expect(texts('gb82 west 1234 5698 7654 32', ibans)).toEqual(['gb82 west 1234 5698 7654 32'])
    expect(texts('de89370400440532013000', ibans)).toEqual(['de89370400440532013000'])
    expect(texts('LV80 bANK 0000 4351 9500 1', ibans)).toEqual([])
    expect(texts('Gb82 West 1234 5698 7654 32', ibans)).toEqual([])
  })
  it('counts code points before an IBAN', () => {
    const text = '😀 IBAN de89-3704-0044-0532-0130-00'
    const [f] = ibans(msg(text))
    expect(f).toMatchObject({ kind: 'iban', start: 7, end: 34, text: 'de89-3704-0044-0532-0130-00' })
    expect(cpSlice(text, f?.start ?? 0, f?.end ?? 0)).toBe('de89-3704-0044-0532-0130-00')
  })
})

describe('phone numbers', () => {
  const phones = only('phone')
  it('confirms international numbers of several countries by their numbering plans', () => {
    for (const number of [
      '+44 20 7946 0958',
      '+33 1 42 68 53 00',
      '+49 30 901820',
      '+81 3-1234-5678',
      '+1 415 555 2671',
    ]) {
      expect(texts(`call ${number} now`, phones)).toEqual([number])
    }
  })
  it('reads 3-3-4 national numbers as North American', () => {
    expect(texts('office (415) 555-2671 or 212.555.0198', phones)).toEqual(['(415) 555-2671', '212.555.0198'])
  })
  it('rejects numbers no plan allows and plain digit runs', () => {
    expect(texts('+44 20 7946', phones)).toEqual([])
    expect(texts('+1 111 111 1111', phones)).toEqual([])
    expect(texts('order 4155552671', phones)).toEqual([])
    expect(texts('(123) 456-7890', phones)).toEqual([]) // NANP area codes do not start with 1
  })
  it('drops a trailing group that is not part of the number', () => {
    expect(texts('+44 20 7946 0958 2024', phones)).toEqual(['+44 20 7946 0958'])
  })
  it('drops a leading group that is not part of the number, and reads two numbers in one run', () => {
    expect(texts('room 12 (415) 555-2671', phones)).toEqual(['(415) 555-2671'])
    expect(texts('(415) 555-2671 (212) 555-0198', phones)).toEqual(['(415) 555-2671', '(212) 555-0198'])
    expect(texts('+44 20 7946 0958 +33 1 42 68 53 00', phones)).toEqual([
      '+44 20 7946 0958',
      '+33 1 42 68 53 00',
    ])
  })
  it('reads no number out of a longer run of digits joined by dots, dashes or slashes', () => {
    expect(texts('international 91-415-555-0132', phones)).toEqual([]) // not 415-555-0132
    expect(texts('reading 415-555-0132.5, +1 415 555 2671.5', phones)).toEqual([])
    expect(texts('2024/415-555-0132', phones)).toEqual([])
    expect(texts('1.415.555.0132 and 1-415-555-0132', phones)).toEqual(['1.415.555.0132', '1-415-555-0132'])
  })
  it('counts code points before a phone number', () => {
    const text = '😀😀 call +44 20 7946 0958'
    const [f] = phones(msg(text))
    expect(f).toMatchObject({ kind: 'phone', start: 8, end: 24, text: '+44 20 7946 0958' })
    expect(cpSlice(text, f?.start ?? 0, f?.end ?? 0)).toBe('+44 20 7946 0958')
  })
})

describe('phone numbers in national format', () => {
  const phones = only('phone')
  // Each: the cue and the number, as a speaker of the cue's language writes it.
  const cued: [string, string][] = [
    ['Telefon: ', '030 12345678'],
    ['Tel. ', '030/12345678'],
    ['Handy: ', '0171 1234567'],
    ['Sie erreichen mich unter ', '(030) 12345678'],
    ['Rufnummer ', '01 5123456'],
    ['Tel. ', '044 668 18 00'],
    ['Ring me on ', '020 7946 0958'],
    ['Mobile: ', '07700 900123'],
    ['call us on ', '(02) 9876 5432'],
    ['Appelez le ', '01 42 68 53 00'],
    ['mon portable : ', '06.12.34.56.78'],
    ['téléphone: ', '02 123 45 67'],
    ['電話: ', '03-1234-5678'],
    ['携帯：', '090-1234-5678'],
    ['電話番号は', '03-1234-5678'],
    ['Cep no: ', '05321234567'],
    ['Cep no: ', '0 (532) 123 45 67'],
    ['Telefon numaram: ', '532 123 45 67'],
    ['Llámame al ', '612 345 678'],
    ['Mi celular es ', '55 1234 5678'],
    ['Chiamami al ', '347 123 4567'],
    ['Meu celular: ', '(11) 98456-5666'],
    ['Liga-me para o ', '912 345 678'],
    ['Bel me op ', '06 12345678'],
    ['Zadzwoń pod ', '512 345 678'],
    ['手机：', '138 1234 5678'],
    ['联系电话：', '010-6552 9988'],
    ['전화: ', '010-1234-5678'],
    ['मेरा फ़ोन नंबर ', '98765 43210'],
    ['Телефон: ', '8 (495) 123-45-67'],
    ['My Israeli number is ', '09-7625400'],
    ['My CN number is ', '13812345678'],
  ]
  it('reads a national number after a cue, in the regions of the cue’s language', () => {
    for (const [cue, number] of cued) expect(texts(`${cue}${number}`, phones), cue).toEqual([number])
  })
  it('reads the example number of every region a cue names, as that region writes it', () => {
    for (const region of CUE_REGIONS) {
      const number = getExampleNumber(region, examples)?.formatNational() ?? ''
      expect(texts(`Tel: ${number}`, phones), region).toEqual([number])
    }
  })
  it('reads no national number without a cue', () => {
    for (const [, number] of cued) expect(texts(`ref ${number}`, phones), number).toEqual([])
    expect(texts('Order 0301234567 shipped; invoice 020 7946 0958 is due', phones)).toEqual([])
  })
  it('needs the cue within 30 characters, with only connecting words between', () => {
    expect(texts(`Telefon:${' '.repeat(22)}030 12345678`, phones)).toEqual(['030 12345678'])
    expect(texts(`Telefon:${' '.repeat(31)}030 12345678`, phones)).toEqual([])
    expect(texts('Call center ticket 45872319 is closed', phones)).toEqual([])
    expect(texts('contact us about order #123456789', phones)).toEqual([])
    expect(texts('Call of Duty 2 sold 12345678 copies', phones)).toEqual([])
    expect(texts('Please call our office on 020 7946 0958', phones)).toEqual(['020 7946 0958'])
    expect(texts('Telefon (Büro): 030 12345678', phones)).toEqual(['030 12345678'])
  })
  it('reads a number only in the regions its cue suggests', () => {
    expect(texts('Appelez le 020 7946 0958', phones)).toEqual([]) // a British number after a French cue
    expect(texts('Ring me on 020 7946 0958', phones)).toEqual(['020 7946 0958'])
  })
  it('reads no date, address or amount after a cue, nor a part of a longer run', () => {
    expect(texts('Call me on 12.03.2024 or 2024-03-12', phones)).toEqual([])
    expect(texts('Phone: 10.0.0.1', phones)).toEqual([])
    expect(texts('Mobile revenue rose 12.5% to 3 456 789 EUR', phones)).toEqual([])
    expect(texts('tel aviv population 4 400 000', phones)).toEqual([])
    expect(texts('call 1234 5678 9012', phones)).toEqual([])
    expect(texts('Telefon: 12345', phones)).toEqual([])
    expect(texts('call me on 0 800 123 456', phones)).toEqual(['0 800 123 456']) // not an amount: it starts with 0
  })
  it('reads each of two numbers after their cues', () => {
    expect(texts('Tel: 030 1234567, Fax: 030 1234568', phones)).toEqual(['030 1234567', '030 1234568'])
  })
  it('counts code points before a national number', () => {
    const text = '😀📞 Telefon: 030 12345678'
    const [f] = phones(msg(text))
    expect(f).toMatchObject({ kind: 'phone', start: 12, end: 24, text: '030 12345678' })
    expect(cpSlice(text, f?.start ?? 0, f?.end ?? 0)).toBe('030 12345678')
  })
  it('never reports a part of a run of digits joined by dots, dashes or slashes, on random texts', () => {
    const pieces = fc.constantFrom('Tel: ', 'call ', ' ', '0', '30', '123', '4567', '12345678', '-', '.', '/')
    const more = fc.constantFrom('(', ')', '+', '+44 ', '+1 ', '415', '555', 'x', ', ', '2671', '😀')
    fc.assert(
      fc.property(fc.array(fc.oneof(pieces, more), { maxLength: 25 }), (parts) => {
        const text = parts.join('')
        for (const f of phones(msg(text))) {
          const points = Array.from(text)
          const before = points.slice(Math.max(0, f.start - 2), f.start).join('')
          const after = points.slice(f.end, f.end + 2).join('')
          expect(before, text).not.toMatch(/(?:\w|\d[./-])$/)
          expect(after, text).not.toMatch(/^(?:\w|[./-]\d)/)
        }
      }),
      { numRuns: 3000 },
    )
  })
})

describe('SSN', () => {
  const ssns = only('ssn')
  it('accepts numbers the SSA rules allow, with dashes or spaces', () => {
    expect(texts('ssn 123-45-6789', ssns)).toEqual(['123-45-6789'])
    expect(texts('mine is 536 22 1234.', ssns)).toEqual(['536 22 1234'])
  })
  it('rejects forbidden areas, groups and serials and the voided advertising numbers', () => {
    for (const bad of [
      '000-12-3456',
      '666-12-3456',
      '900-12-3456',
      '999-12-3456',
      '123-00-4567',
      '123-45-0000',
    ]) {
      expect(texts(bad, ssns)).toEqual([])
    }
    expect(texts('the famous 078-05-1120', ssns)).toEqual([])
    expect(texts('123-45 6789', ssns)).toEqual([]) // mixed separators
  })
  it('counts nine bare digits only after a cue', () => {
    expect(texts('reference 123456789', ssns)).toEqual([])
    expect(texts('SSN: 123456789', ssns)).toEqual(['123456789'])
    expect(texts('my social security number is 536221234', ssns)).toEqual(['536221234'])
  })
  it('counts dotted groups only after a cue, by the same rules', () => {
    expect(texts('SSN: 078.05.1123', ssns)).toEqual(['078.05.1123'])
    expect(texts('social security number 536.22.1234.', ssns)).toEqual(['536.22.1234'])
    expect(texts('ref 078.05.1123 and version 123.45.6789', ssns)).toEqual([])
    expect(texts('SSN: 000.12.3456, SSN 666.12.3456, SSN 078.05.1120', ssns)).toEqual([])
    expect(texts('SSN 078.05-1123 or SSN 078.05.1123.4', ssns)).toEqual([])
  })
  it('counts code points before an SSN', () => {
    const text = '😀 SSN: 078.05.1123 and 😀 123-45-6789'
    expect(ssns(msg(text)).map((f) => [f.start, f.end, cpSlice(text, f.start, f.end)])).toEqual([
      [7, 18, '078.05.1123'],
      [25, 36, '123-45-6789'],
    ])
  })
})

describe('email', () => {
  const emails = only('email')
  it('finds addresses confirmed by validator', () => {
    expect(texts('write to bob.smith+tag@example.co.uk.', emails)).toEqual(['bob.smith+tag@example.co.uk'])
    expect(texts('ünïcode@exämple.de', emails)).toEqual(['ünïcode@exämple.de'])
  })
  it('rejects what is not an address', () => {
    expect(texts('a@b', emails)).toEqual([])
    expect(texts('foo@bar.c', emails)).toEqual([])
    expect(texts('@handle and user@', emails)).toEqual([])
  })
})

describe('email candidates', () => {
  // The scan from each `@` must find what one regex over the whole text finds.
  const isEmail = isEmailModule.default
  const WHOLE_TEXT =
    /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]{1,64}@[\p{L}\p{N}-]{1,63}(?:\.[\p{L}\p{N}-]{1,63})+/gu
  const byRegex = (text: string) =>
    [...text.matchAll(WHOLE_TEXT)].filter((m) => isEmail(m[0])).map((m) => [m.index, m.index + m[0].length])
  const pieces = fc.constantFrom(
    'a',
    'jo.bloggs',
    'x'.repeat(64),
    'y'.repeat(65),
    '😀',
    'é',
    '𝒜',
    '@',
    '.',
    '-',
    ' ',
    '\ud800',
    'example.com',
    'jo@example.com',
    '@ex.com',
    'é@ex.com',
    'ex',
    '.com',
    '+tag',
    '%',
    '_',
    'ß',
    '1',
    '\n',
  )
  it('are the candidates of one regex over the text, on random texts', () => {
    // The scan itself, on the text as given (the rule reads the text's NFKC form: 𝒜 is an A).
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 40 }), (parts) => {
        const text = parts.join('')
        const spans = findPii(text, ['email']).map(({ span }) => [span.start, span.end])
        expect(spans).toEqual(byRegex(text))
      }),
      { numRuns: 2000 },
    )
  })
})

describe('IP addresses', () => {
  const ips = only('ip_address')
  it('finds IPv4 and IPv6 in every written form', () => {
    expect(texts('host 192.168.1.20, gw 10.0.0.1.', ips)).toEqual(['192.168.1.20', '10.0.0.1'])
    expect(texts('v6 2001:db8::1 and ::ffff:192.0.2.1', ips)).toEqual(['2001:db8::1', '::ffff:192.0.2.1'])
    expect(texts('link fe80::1%eth0 up', ips)).toEqual(['fe80::1%eth0'])
    expect(texts('2001:0db8:85a3:0000:0000:8a2e:0370:7334', ips)).toEqual([
      '2001:0db8:85a3:0000:0000:8a2e:0370:7334',
    ])
  })
  it('reports no fragment of a longer run of digits, dots, hex digits and colons', () => {
    expect(texts('mapped ::ffff:192.168.1 truncated', ips)).toEqual([]) // not ::ffff:192
    expect(texts('text::ffff:192.0.2.1', ips)).toEqual([]) // not 192.0.2.1
    expect(texts('foo2001:db8::10.0.0.1', ips)).toEqual([])
    expect(texts('192.168.1.1.1 and 2001:db8::1.5', ips)).toEqual([])
    expect(texts('80:10.0.0.1 or ffff:10.0.0.1', ips)).toEqual([])
  })
  it('takes a label before an IPv4 address and a port after it', () => {
    expect(texts('ip:10.0.0.1, IPv4:10.0.0.2', ips)).toEqual(['10.0.0.1', '10.0.0.2'])
    expect(texts('host 10.0.0.1:8080', ips)).toEqual(['10.0.0.1'])
    expect(texts('[::ffff:192.168.1.1]:80 and [2001:db8::1]:8080', ips)).toEqual([
      '::ffff:192.168.1.1',
      '2001:db8::1',
    ])
  })
  it('skips a dotted quad right after a version word', () => {
    for (const text of [
      'version 1.2.3.4',
      'Version: 1.2.3.4',
      'v. 1.2.3.4',
      'firmware 2.0.0.1',
      'v1.2.3.4',
      'Upgrade to 10.4.2.1 for the fix.',
      'we updated from 10.4.1.9 last week',
      'patch 1.2.3.4',
      'bump to 2.10.0.3',
    ]) {
      expect(texts(text, ips), text).toEqual([])
    }
    expect(texts('IP 1.2.3.4', ips)).toEqual(['1.2.3.4'])
    expect(texts('version 2 listens on 10.0.0.1', ips)).toEqual(['10.0.0.1'])
    expect(texts('traffic from 10.0.0.1 to 10.0.0.2', ips)).toEqual(['10.0.0.1', '10.0.0.2'])
    expect(texts('upgrade the gateway to 10.0.0.1', ips)).toEqual(['10.0.0.1'])
  })
  it('takes the prefix length of CIDR notation when the family allows it', () => {
    expect(texts('Subnet: 192.168.1.0/24, route 10.0.0.0/8.', ips)).toEqual(['192.168.1.0/24', '10.0.0.0/8'])
    expect(texts('Prefix: 2001:db8::/32 and ::1/128', ips)).toEqual(['2001:db8::/32', '::1/128'])
    expect(texts('::ffff:192.168.1.0/96 fe80::1%eth0/64', ips)).toEqual([
      '::ffff:192.168.1.0/96',
      'fe80::1%eth0/64',
    ])
    expect(texts('10.0.0.0/123 and 2001:db8::/9999', ips)).toEqual(['10.0.0.0', '2001:db8::'])
    expect(texts('::/0 is the default route', ips)).toEqual([]) // the unspecified address says nothing
  })
  it('never reports a fragment of a dotted or hex run, on random texts', () => {
    const pieces = fc.constantFrom(
      '1',
      '12',
      '192',
      '256',
      '.',
      ':',
      '::',
      'ffff',
      'db8',
      'g',
      ' ',
      '/24',
      ',',
    )
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 30 }), (parts) => {
        const text = parts.join('')
        for (const f of ips(msg(text))) {
          const before = text.slice(Math.max(0, f.start - 1), f.start)
          const after = text.slice(f.end, f.end + 2)
          expect(before, text).not.toMatch(/[\w.]/)
          expect(after, text).not.toMatch(/^(?:\w|\.[0-9A-Fa-f])/)
        }
      }),
      { numRuns: 3000 },
    )
  })
  it('counts code points before addresses', () => {
    const text = '😀😀 2001:db8::/32 and 10.1.2.3'
    expect(ips(msg(text)).map((f) => [f.start, f.end, cpSlice(text, f.start, f.end)])).toEqual([
      [3, 16, '2001:db8::/32'],
      [21, 29, '10.1.2.3'],
    ])
  })
  it('rejects impossible addresses, times and C++ scopes', () => {
    expect(texts('256.1.1.1 and 1.2.3', ips)).toEqual([])
    expect(texts('at 12:30:45 use std::vector', ips)).toEqual([])
    expect(texts('mac 00:1a:2b:3c:4d:5e', ips)).toEqual([])
  })
})

describe('piiMatcher', () => {
  it('reports every kind in order of start when no kinds are flagged', () => {
    const text = 'Mail ann@example.com, card 4111111111111111, ip 10.1.2.3, ssn 123-45-6789'
    expect(all(msg(text)).map((f) => [f.kind, f.text])).toEqual([
      ['email', 'ann@example.com'],
      ['credit_card', '4111111111111111'],
      ['ip_address', '10.1.2.3'],
      ['ssn', '123-45-6789'],
    ])
  })
  it('reports only the flagged kinds', () => {
    const text = 'Mail ann@example.com, card 4111111111111111'
    expect(piiMatcher(['email'])(msg(text)).map((f) => f.kind)).toEqual(['email'])
    expect(piiMatcher([])(msg(text))).toEqual([])
  })
  it('copies source and index and counts code points in every kind', () => {
    const text = '𝒜𝒷𝒸 ann@example.com'
    const [f] = all({ source: 'context', index: 7, role: 'context', text })
    expect(f).toMatchObject({ kind: 'email', source: 'context', index: 7, start: 4, end: 19 })
  })
})

describe('the prefilter', () => {
  // possibleKinds must never leave out a kind whose finder would find something: the findings
  // with it are those of every kind run over every text.
  const planted = fc.constantFrom(
    '4111 1111 1111 1111',
    '4111111111111111',
    '5500-0000-0000-0004',
    'DE89 3704 0044 0532 0130 00',
    'de89370400440532013000',
    'GB82WEST12345698765432',
    '+1 415 555 0134',
    '(415) 555-2671',
    'Tel: 030 12345678',
    'call me on 020 7946 0958',
    '123-45-6789',
    'SSN 123456789',
    'ssn: 123.45.6789',
    '192.168.1.20',
    '10.0.0.0/8',
    '2001:db8::1',
    '::ffff:192.0.2.1',
    'fe80::1%eth0',
    'jo@example.com',
    `ghp_${'a1B2'.repeat(9)}`,
    'AKIAIOSFODNN7EXAMPLE',
    'postgres://user:pa55@db.example:5432/app',
    // The kinds of section 13.
    '16Yeky6GMjeNkAiNcBY7ZhrLoMSgg1BoyZ',
    'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
    '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    'AA-BB-CC-DD-EE-FF',
    '00:1A:2B:3C:4D:5E',
    'aabb.ccdd.eeff',
    '911-70-1234',
    'ABA 121000358',
    '3222-7162-7',
    'AB 12 34 56 C',
    'NHS 943 476 5919',
    '55555555-K',
    'X9613851N',
    'RSSMRAQRCMNFNLRG',
    'MRTNTN23M02D969P',
    'PESEL 44051401458',
    '3123 4567 8909',
    '3123:4567:8909',
    'ABCPD1234Z',
    'S2740116C',
    'TFN 876543210',
    '51 824 753 556',
    '2123 45670 1',
    'born on 4 July 1976',
    'DOB 1985-07-23',
  )
  const pieces = fc.constantFrom(
    '0',
    '1',
    '12',
    '4111',
    '555',
    ' ',
    '-',
    '.',
    ':',
    '::',
    '/',
    '(',
    ')',
    '+',
    '@',
    '_',
    'ab',
    'DE',
    'x',
    'é',
    '😀',
    '٣',
    '\n',
    'version ',
  )
  const check = (text: string) => {
    expect(findPii(text, PII_KINDS)).toEqual(findPii(text, PII_KINDS, false))
  }
  it('leaves out no kind with a finding, on random texts with planted entities', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(pieces, planted), { maxLength: 30 }), (parts) => check(parts.join(''))),
      { numRuns: 3000 },
    )
  })
  it('leaves out no kind with a finding, on random strings', () => {
    const chars = fc.constantFrom(...'0123456789 .-:/()+@abAF'.split(''), 'é', '\ud83d\ude00')
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 60 }), (cs) => check(cs.join(''))),
      { numRuns: 3000 },
    )
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 80 }), check), { numRuns: 1000 })
  })
  it('proves an ordinary text holds no candidate of the digit kinds', () => {
    const text = 'At 10:30 on day 2 we saw 40 requests a second; TypeScript 5.4, ref: a.b(c).'
    // A key, a MAC address and a fiscal code may hold no digit: their own patterns are the prefilter.
    expect(possibleKinds(text, PII_KINDS)).toEqual([
      'api_key',
      'crypto_wallet',
      'mac_address',
      'it_fiscal_code',
      'date_of_birth',
    ])
    expect(possibleKinds('call 555 0134 or +1 415 mail@x', PII_KINDS)).toEqual([
      'email',
      'phone',
      'ip_address',
      'api_key',
      'crypto_wallet',
      'mac_address',
      'uk_nino',
      'es_nif',
      'es_nie',
      'it_fiscal_code',
      'in_pan',
      'sg_nric',
      'date_of_birth',
    ])
    // Past 12 digits in a cluster, the rest of the text is not read: every kind may be there.
    expect(possibleKinds('card 4111 1111 1111 1111', PII_KINDS)).toEqual([...PII_KINDS])
  })
})

describe('the IPv4 candidate pattern', () => {
  it('finds what it found with its lookbehind first, on random texts', () => {
    const before = /(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)/g
    const chars = fc.constantFrom(...'0123456789....:ab_ -'.split(''), '255', '192.168.', 'é')
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 40 }), (cs) => {
        const text = cs.join('')
        const spans = (re: RegExp) => [...text.matchAll(re)].map((m) => [m.index, m[0]])
        expect(spans(IPV4_CANDIDATE)).toEqual(spans(before))
      }),
      { numRuns: 3000 },
    )
  })
})
