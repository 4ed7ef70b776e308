import { isIPv4, isIPv6 } from 'node:net'
import { electronicFormatIBAN, getCountrySpecifications, isValidIBAN } from 'ibantools'
import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js/max'
import { LRUCache } from 'lru-cache'
import isEmailModule from 'validator/lib/isEmail.js'
import { PII_KINDS } from '../../schemas/policies.js'
import type { Finding, FindingKind, TargetText } from '../types.js'
import { findApiKeys, type Span } from './api-keys.js'
import { findBirthDates } from './birth-dates.js'
import { isCardNumber, isIssuerDigit } from './cards.js'
import { CodePointIndex, isAsciiText } from './code-points.js'
import { isWordAt, nfkcTarget, originalEnd, originalStart } from './fold.js'
import { IDENTITY_FINDERS } from './identity-numbers.js'
import { fitsRegion, phoneCueRegions } from './phone-cues.js'
import type { TextMatcher } from './types.js'
import { findMacAddresses, findWallets } from './wallets.js'

/** The entity kinds a pii rule may flag: the API's list (docs/policies.md). */
export { PII_KINDS }
export type PiiKind = (typeof PII_KINDS)[number]

/**
 * How each kind is found: a candidate pattern of V8's, linear (every quantifier bounded or
 * deterministic, starts anchored by a lookbehind, see the adversarial tests), then a
 * confirmation by the library the field trusts. Spans are UTF-16 until the end.
 */
type Finder = (text: string, found: Span[]) => void

/** validator's CommonJS module is the function, with `default` pointing at itself (see cards.ts). */
const isEmail = isEmailModule.default

/**
 * Card numbers: 12–19 digits, optionally in groups separated by single spaces or dashes,
 * confirmed by issuer prefix and length (cards.ts) and the Luhn check digit (validator). A run
 * of groups may hold more than the card (an order number before it, a year after it, other card
 * numbers in a list): from each group, the runs of groups of at most 19 digits are tried,
 * longest first, so a candidate of any length costs at most 19 cheap checks per group. Digits
 * inside a valid IBAN are not a card, nor are digits that a dot or colon continues into more
 * digits (4111111111111111.25, 1.4111111111111111: a decimal or a version, not a card).
 *
 * Groups joined by commas (card 4111,1111,1111,1111) are a card only in a card's own grouping,
 * as a whole list, and after a word that says a card: four groups of four digits (and a fifth of
 * one to three, for 17–19 digits), or 4-6-5 and 4-6-4 (American Express, Diners), with no other
 * comma-joined number before or after, within 40 characters after a card word (`CARD_CUE`:
 * card, credit, visa, Karte, tarjeta, カード, … and a tool call's `card:` argument). Amounts
 * in thousands (4,111,111,111,111) and lists (12,4111,1111,1111,1111) are never cards, and a
 * bare list of four four-digit numbers is one about 3% of the time (the Luhn digit and an
 * issuer's prefix), too often to be read without a cue.
 */
const CARD_CANDIDATE = /(?<![\w-]|\d[.:])\d(?:[ ,-]?\d){11,}(?![\w-]|[.:]\d)/g
/** A word that says a card number follows, in the languages of the phone cues and a few more. */
const CARD_CUE =
  /(?<![\p{L}\p{N}])(?:card|cards|credit|debit|cc|ccn|pan|visa|mastercard|amex|discover|diners|jcb|unionpay|maestro|karte|kreditkarte|tarjeta|carte|cartão|cartao|carta|kaart|karta|kort|kortti|kart|kredi)(?![\p{L}\p{N}])|カード|卡号|卡號|信用卡|카드/iu
/** The groupings of a card written with commas, by group lengths. */
const COMMA_GROUPINGS: ReadonlySet<string> = new Set([
  '4,4,4,4',
  '4,4,4,4,1',
  '4,4,4,4,2',
  '4,4,4,4,3',
  '4,6,5',
  '4,6,4',
])
/**
 * Whether groups i..j of a candidate (`starts`, `ends` within it, at `at` in `text`) may be a
 * card as separated: any comma between them makes them a comma-joined list, which must be the
 * whole list (no comma and digit before or after it) in a card's grouping, commas only, after a
 * card word.
 */
function cardGrouping(
  text: string,
  at: number,
  starts: number[],
  ends: number[],
  i: number,
  j: number,
): boolean {
  let commas = 0
  for (let k = i; k < j; k++) if (text.charCodeAt(at + (ends[k] as number)) === 44) commas++
  if (commas === 0) return true
  if (commas !== j - i) return false
  const from = at + (starts[i] as number)
  const to = at + (ends[j] as number)
  if (text.charCodeAt(from - 1) === 44 && isDigitAt(text, from - 2)) return false
  if (text.charCodeAt(to) === 44 && isDigitAt(text, to + 1)) return false
  const lengths: number[] = []
  for (let k = i; k <= j; k++) lengths.push((ends[k] as number) - (starts[k] as number))
  return COMMA_GROUPINGS.has(lengths.join(',')) && CARD_CUE.test(text.slice(Math.max(0, from - 40), from))
}
function findCards(text: string, found: Span[]): void {
  // The text's IBANs, found when the first card is.
  let ibans: Span[] | undefined
  CARD_CANDIDATE.lastIndex = 0
  for (let m = CARD_CANDIDATE.exec(text); m !== null; m = CARD_CANDIDATE.exec(text)) {
    const candidate = m[0]
    // Groups as [start, end) within the candidate, and where each starts in `digits`, the
    // candidate without its separators: a run of groups i..j is digits[at[i], at[j + 1]).
    const starts: number[] = []
    const ends: number[] = []
    const at: number[] = [0]
    const group = /\d+/g
    for (let g = group.exec(candidate); g !== null; g = group.exec(candidate)) {
      starts.push(g.index)
      ends.push(g.index + g[0].length)
      at.push((at[at.length - 1] as number) + g[0].length)
    }
    const digits =
      candidate.length === (at[at.length - 1] as number) ? candidate : candidate.replace(NOT_DIGIT, '')
    let i = 0
    while (i < starts.length) {
      let matched = -1
      const from = at[i] as number
      // No issuer's prefix starts with 0 or 7: skip such groups without a check.
      if (isIssuerDigit(digits.charCodeAt(from))) {
        let j = i
        while (j + 1 < starts.length && (at[j + 2] as number) - from <= 19) j++
        for (; j >= i; j--) {
          const length = (at[j + 1] as number) - from
          if (
            length >= 12 &&
            length <= 19 &&
            isCardNumber(digits.slice(from, from + length)) &&
            cardGrouping(text, m.index, starts, ends, i, j)
          ) {
            matched = j
            break
          }
        }
      }
      if (matched < 0) {
        i++
        continue
      }
      const start = m.index + (starts[i] as number)
      const end = m.index + (ends[matched] as number)
      // Digits that belong to a valid IBAN are its account number, not a card (RS35 2600 0560
      // 1001 6113 79 holds a Luhn-valid Mastercard number): a card-only policy must pass an IBAN.
      if (ibans === undefined) {
        ibans = []
        findIbans(text, ibans)
      }
      if (!ibans.some((s) => s.start < end && start < s.end)) found.push({ start, end })
      i = matched + 1
    }
  }
}

/**
 * IBANs in electronic (DE89370400440532013000) or print format (GB82 WEST 1234 5698 7654 32),
 * grouped by spaces or dashes (DE89-3704-0044-0532-0130-00), in upper case as the standard writes
 * them or all in lower case as people type them (a mix, LV80 bANK…, is no IBAN), confirmed by
 * ibantools: the country's length and BBAN format and the mod-97 check digits. A candidate longer
 * than its country's IBAN (a number or words after it) is cut to that length, where a group ends:
 * never inside one (GB82 WEST 1234 5698 7654 3299 is no IBAN followed by 99).
 */
const IBAN_CANDIDATE = /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ -]?[A-Za-z0-9]){11,30}(?![A-Za-z0-9])/g
const IBAN_LENGTHS: ReadonlyMap<string, number> = new Map(
  Object.entries(getCountrySpecifications()).flatMap(([country, spec]) =>
    spec.chars ? [[country, spec.chars] as [string, number]] : [],
  ),
)
const UPPER = /[A-Z]/
const LOWER = /[a-z]/
function findIbans(text: string, found: Span[]): void {
  IBAN_CANDIDATE.lastIndex = 0
  for (let m = IBAN_CANDIDATE.exec(text); m !== null; m = IBAN_CANDIDATE.exec(text)) {
    const candidate = m[0]
    const length = IBAN_LENGTHS.get(candidate.slice(0, 2).toUpperCase())
    if (length === undefined) continue
    // The end of the `length`-th character that is not a separator.
    let end = 0
    for (let seen = 0; seen < length && end < candidate.length; end++) {
      const c = candidate[end]
      if (c !== ' ' && c !== '-') seen++
    }
    const next = candidate[end]
    if (next !== undefined && next !== ' ' && next !== '-') continue
    const iban = candidate.slice(0, end)
    const electronic = electronicFormatIBAN(iban)
    if (electronic === null || electronic.length < length) continue
    if (UPPER.test(iban) && LOWER.test(iban)) continue
    if (!isValidIBAN(electronic)) continue
    found.push({ start: m.index, end: m.index + end })
  }
}

/**
 * Phone numbers, confirmed by libphonenumber-js with its full metadata (the number is valid for
 * its numbering plan, not just of a possible length):
 * - international format (+ and a country code), for any country, anywhere;
 * - the North American 3-3-4 format ((415) 555-2671, 415.555.0198), read as a US number, anywhere;
 * - every other national format (030 12345678, 020 7946 0958, 03-1234-5678, 05321234567) only
 *   after a cue word ending at most 30 characters before it, with nothing but connecting words
 *   between (Telefon:, ring me on, 電話:, Cep no:), and valid in one of the regions of the cue's
 *   language (phone-cues.ts). Without a country, a national number is indistinguishable from an
 *   order number, a date or an amount, as nine bare digits are from an SSN; dates (12.03.2024),
 *   IPv4 addresses and amounts in thousands (3 456 789) are not read even after a cue.
 *
 * Candidates are runs of digit groups separated by spaces, dots, dashes, slashes or
 * parentheses, with an optional leading +, never part of a longer run of digits joined by dots,
 * dashes or slashes (no 415-555-0132 out of 91-415-555-0132). A run may hold more than the
 * number (a year after it, a count before it): the longest part of it that is an international
 * or North American number wins, trying at most two groups off either end, where spaces separate
 * them. A national number is the whole run: a part of one (1234 5678 of 1234 5678 9012) is not.
 *
 * libphonenumber-js's own findNumbers scanner is not used: it costs 48 ms per 100 KB of prose and
 * 206 ms per 100 KB holding a number every 400 characters (2.2 ms per KB), while confirming one
 * candidate in one region costs 10–130 µs, so only strict candidates reach it: the same 100 KB
 * costs 0.1 ms here (bench/detectors.mjs). The worst case is a text of nothing but distinct
 * numbers, each confirmed: 100 KB of international numbers costs about 0.1 s, and of national
 * numbers after an English cue, each tried in up to nine regions, about 0.3 s.
 */
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)'
/**
 * The first three characters spelled out let V8 skip prose quickly; a dotted quad that is an
 * IPv4 address is not matched at all (it is no phone number, and IP runs are common).
 */
const PHONE_RUN = new RegExp(
  String.raw`(?<![\w+])(?:[+(]\d[\d ()./-]|(?!(?:${OCTET}\.){3}${OCTET}(?![\d.]))\d[\d ()./-])[\d ()./-]{3,31}\d(?!\w|[ ()./-]\d)`,
  'g',
)
/** Where a North American number may be part of a run: its 3-4 ending after an area code. */
const NANP_PART = /(?:\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}/
const NANP_FORMAT = /^(?:1[ .-])?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}$/
const NOT_DIGIT = /\D/g
const PIECE = /[^ ]+/g
/**
 * libphonenumber's verdicts by candidate: a conversation is sent again with each turn, so the
 * same numbers come back, and confirming one costs 10–130 µs (the library builds its regexes per
 * call) against well under 1 µs to look it up.
 */
const phoneVerdicts = new LRUCache<string, boolean>({ max: 10_000 })
function isValidPhone(key: string, candidate: string, region: CountryCode | undefined): boolean {
  let valid = phoneVerdicts.get(key)
  if (valid === undefined) {
    valid = parsePhoneNumberFromString(candidate, region)?.isValid() === true
    phoneVerdicts.set(key, valid)
  }
  return valid
}
/**
 * Whether a run of digit groups is a date (12.03.2024, 2024-03-12), an IPv4 address or an amount
 * in thousands (3 456 789, 12.345.678), which no cue makes a phone number. Read by hand rather
 * than by regexes: every run of digits in a text that is not a phone number by its format asks.
 */
function isOrdinaryNumber(run: string): boolean {
  // The groups' lengths and values, and the one separator between them (mixed ones make none of these).
  let groups = 0
  let separator = -1
  let length = 0
  let value = 0
  let firstLength = 0
  let firstLead = 0
  let middle = 0
  let quad = true
  let thousands = true
  for (let i = 0; i <= run.length; i++) {
    const c = i < run.length ? run.charCodeAt(i) : -1
    if (c >= 48 && c <= 57) {
      if (length === 0 && groups === 0) firstLead = c
      length++
      value = value * 10 + (c - 48)
      continue
    }
    if (length === 0) return false
    groups++
    if (groups === 1) firstLength = length
    else if (groups === 2) middle = length
    if (length > 3 || value > 255) quad = false
    if (groups > 1 && length !== 3) thousands = false
    length = 0
    value = 0
    if (c === -1) break
    if (separator === -1) separator = c
    else if (separator !== c) return false
  }
  if (groups === 4 && separator === 46 && quad) return true
  if (groups === 3 && separator !== 32 && middle <= 2 && firstLength <= 4) return true
  return (
    thousands && groups >= 2 && (separator === 32 || separator === 46) && firstLength <= 2 && firstLead !== 48
  )
}
/** The cue regions of the last run that asked, by its text and offset. */
let cueText = ''
let cueAt = -1
let cueRegions: readonly CountryCode[] = []
function regionsBefore(text: string, at: number): readonly CountryCode[] {
  if (cueAt !== at || cueText !== text) {
    cueRegions = phoneCueRegions(text, at)
    cueText = text
    cueAt = at
  }
  return cueRegions
}
/**
 * Whether `candidate`, a part of the run at `at` in `text` holding `digits` digits, is a phone
 * number: international, North American, or, when it is the `whole` run, national after a cue.
 */
function isPhone(candidate: string, digits: number, text: string, at: number, whole: boolean): boolean {
  if (candidate.charCodeAt(0) === 43) {
    // Remembered as written: the digits alone are only needed to ask the library.
    let valid = phoneVerdicts.get(candidate)
    if (valid === undefined) {
      valid = parsePhoneNumberFromString(`+${candidate.replace(NOT_DIGIT, '')}`)?.isValid() === true
      phoneVerdicts.set(candidate, valid)
    }
    return valid
  }
  if ((digits === 10 || digits === 11) && NANP_FORMAT.test(candidate)) {
    if (isValidPhone(candidate, candidate, 'US')) return true
  }
  if (!whole || isOrdinaryNumber(candidate)) return false
  const regions = regionsBefore(text, at)
  if (regions.length === 0) return false
  const national = candidate.replace(NOT_DIGIT, '')
  for (const region of regions) {
    if (fitsRegion(region, national) && isValidPhone(`${region} ${candidate}`, candidate, region)) return true
  }
  return false
}
function isDigitAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i)
  return c >= 48 && c <= 57
}
/** How many digits `s` holds in [from, to). */
function countDigits(s: string, from: number, to: number): number {
  let n = 0
  for (let k = from; k < to; k++) {
    const c = s.charCodeAt(k)
    if (c >= 48 && c <= 57) n++
  }
  return n
}
function findPhones(text: string, found: Span[]): void {
  PHONE_RUN.lastIndex = 0
  for (let m = PHONE_RUN.exec(text); m !== null; m = PHONE_RUN.exec(text)) {
    const run = m[0]
    // The rest of a run of digits joined by dots, dashes or slashes that was too long to match
    // from its start (checked here rather than in a lookbehind, which costs every position).
    const before = text.charCodeAt(m.index - 1)
    if ((before === 46 || before === 45 || before === 47) && isDigitAt(text, m.index - 2)) continue
    // The whole run first: most runs are one number, or none and of one piece.
    const count = countDigits(run, 0, run.length)
    if (count >= 7 && count <= 15 && isPhone(run, count, text, m.index, true)) {
      found.push({ start: m.index, end: m.index + run.length })
      continue
    }
    // A part of a run is only ever an international or a North American number.
    if (run.indexOf(' ') >= 0 && (run.charCodeAt(0) === 43 || NANP_PART.test(run))) {
      findPhonesInPieces(text, run, m.index, found)
    }
  }
}
/**
 * The numbers in a run that is not one: its pieces between spaces i..j, the longest first, from
 * at most two pieces off either end; after a number, the pieces after it in the same way.
 */
function findPhonesInPieces(text: string, run: string, at: number, found: Span[]): void {
  // Each piece as [start, end) within the run, and how many digits the pieces before each hold:
  // pieces i..j hold digits[j + 1] - digits[i].
  const starts: number[] = []
  const ends: number[] = []
  const digits: number[] = [0]
  PIECE.lastIndex = 0
  for (let p = PIECE.exec(run); p !== null; p = PIECE.exec(run)) {
    const end = p.index + p[0].length
    starts.push(p.index)
    ends.push(end)
    digits.push((digits[digits.length - 1] as number) + countDigits(run, p.index, end))
  }
  const last = starts.length - 1
  let first = 0
  while (first <= last) {
    let matched = -1
    for (let i = first; i <= Math.min(first + 2, last) && matched < 0; i++) {
      for (let j = last; j >= Math.max(i, last - 2); j--) {
        // The whole run was tried.
        if (i === 0 && j === last) continue
        const count = (digits[j + 1] as number) - (digits[i] as number)
        if (count < 7 || count > 15) continue
        let from = starts[i] as number
        const to = ends[j] as number
        // A parenthesis opened before the number and closed after it is not part of it.
        if (run.charCodeAt(from) === 40 && !run.slice(from, to).includes(')')) from++
        if (isPhone(run.slice(from, to), count, text, at, false)) {
          found.push({ start: at + from, end: at + to })
          matched = j
          break
        }
      }
    }
    if (matched < 0) break
    first = matched + 1
  }
}

/**
 * US Social Security numbers by the SSA's rules: area not 000, 666 or 900–999, group not 00,
 * serial not 0000, and not one of the numbers the SSA voided after they were printed in
 * advertising (078-05-1120 from a wallet insert, 219-09-9999 and 457-55-5462). Written
 * 123-45-6789 or 123 45 6789; nine bare digits and the dotted 123.45.6789 count only right after
 * a cue ("SSN", "social security number"), since nine digits alone are as likely an order or
 * account number and dotted groups a version or a reference.
 */
const SSN_CANDIDATE = /(?<![\w-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\w-])/g
const SSN_CUED =
  /\b(?:ssn|social security(?: number| no\.?)?)\b[^\w\n]{0,5}(?:is |of )?(\d{9}|\d{3}\.\d{2}\.\d{4})(?!\w|[.-]\d)/gi
const VOIDED_SSNS: ReadonlySet<string> = new Set(['078051120', '219099999', '457555462'])
function isSsn(digits: string): boolean {
  const area = Number(digits.slice(0, 3))
  return (
    area !== 0 &&
    area !== 666 &&
    area < 900 &&
    digits.slice(3, 5) !== '00' &&
    digits.slice(5) !== '0000' &&
    !VOIDED_SSNS.has(digits)
  )
}
function findSsns(text: string, found: Span[]): void {
  SSN_CANDIDATE.lastIndex = 0
  for (let m = SSN_CANDIDATE.exec(text); m !== null; m = SSN_CANDIDATE.exec(text)) {
    if (isSsn(`${m[1]}${m[3]}${m[4]}`)) found.push({ start: m.index, end: m.index + m[0].length })
  }
  SSN_CUED.lastIndex = 0
  for (let m = SSN_CUED.exec(text); m !== null; m = SSN_CUED.exec(text)) {
    const written = m[1] as string
    const end = m.index + m[0].length
    if (isSsn(written.replace(NOT_DIGIT, ''))) found.push({ start: end - written.length, end })
  }
}

/**
 * Email addresses: a local part and a dotted domain (Unicode letters allowed), confirmed by
 * validator's isEmail (lengths, label rules, a real top-level domain shape).
 */
/** validator's verdicts by candidate (a few µs each), for the addresses each turn sends again. */
const emailVerdicts = new LRUCache<string, boolean>({ max: 10_000 })
function isEmailCached(candidate: string): boolean {
  let valid = emailVerdicts.get(candidate)
  if (valid === undefined) {
    valid = isEmail(candidate)
    emailVerdicts.set(candidate, valid)
  }
  return valid
}

const LOCAL_RUN = /[\p{L}\p{N}._%+-]{1,65}$/u
const LOCAL_BEFORE = /[\p{L}\p{N}._%+-]$/u
const DOMAIN = /[\p{L}\p{N}-]{1,63}(?:\.[\p{L}\p{N}-]{1,63})+/uy
/**
 * Candidates grow out from each `@`: the run of local-part characters before it, when it holds
 * 1 to 64 code points, is preceded by none and starts where the previous candidate ended or
 * later, and a dotted domain after it. These are the candidates of one regex over the text,
 * `(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]{1,64}@[\p{L}\p{N}-]{1,63}(?:\.[\p{L}\p{N}-]{1,63})+`,
 * without trying a Unicode class at every position of a text that holds a few addresses (a
 * tenth of the pii rule's time on a 4 KB conversation, before).
 */
function findEmails(text: string, found: Span[]): void {
  let reached = 0
  for (let at = text.indexOf('@'); at >= 0; at = text.indexOf('@', at + 1)) {
    // 65 code points are at most 130 UTF-16 units.
    const run = LOCAL_RUN.exec(text.slice(Math.max(0, at - 130), at))?.[0]
    if (run === undefined) continue
    const start = at - run.length
    if (start < reached || LOCAL_BEFORE.test(text.slice(Math.max(0, start - 2), start))) continue
    if (run.length > 64 && [...run].length > 64) continue
    DOMAIN.lastIndex = at + 1
    const domain = DOMAIN.exec(text)?.[0]
    if (domain === undefined) continue
    const end = at + 1 + domain.length
    if (isEmailCached(text.slice(start, end))) found.push({ start, end })
    reached = end
  }
}

/**
 * IP addresses, v4 dotted quads and v6 in every written form (full, compressed, IPv4-mapped,
 * with a zone), confirmed by node:net, with the prefix length that follows in CIDR notation
 * (192.168.1.0/24, 2001:db8::/32; a length the family does not allow, 10.0.0.0/123, is left
 * out). An address is never a fragment of a longer run of digits, dots, hex digits and colons:
 * neither ::ffff:192 of ::ffff:192.168.1 nor 192.0.2.1 of text::ffff:192.0.2.1 or of
 * 192.0.2.1.5. A port after an IPv4 address (10.0.0.1:8080) ends it. Dotted version numbers
 * are indistinguishable from addresses: a quad is taken for one, and not reported, only right
 * after a version word (version 1.2.3.4, v. 1.2.3.4, firmware 1.2.3.4, patch 1.2.3.4) or an
 * upgrade (upgrade to 10.4.2.1, updated from 1.2.3.4, bump to 1.2.3.4).
 */
/**
 * `(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}`, its lookbehind moved after the first digit: V8 then
 * skips to digits instead of trying the lookbehind at every position (3× faster over prose).
 */
export const IPV4_CANDIDATE = /\d(?<![\w.]\d)\d{0,2}\.(?:\d{1,3}\.){2}\d{1,3}(?![\w]|\.\d)/g
const IPV6_CANDIDATE =
  /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{1,4})?(?:%[\w.-]{1,32})?(?![\w:]|\.[0-9A-Fa-f])/g
const HEX_DIGIT = /[0-9A-Fa-f]/
/** An IPv6 candidate holds two colons with at most four hex digits between them. */
const COLON_PAIR = /:[0-9A-Fa-f]{0,4}:/
const PREFIX_LENGTH = /\/(\d{1,3})(?!\w|[./]\w)/y
const VERSION_CUE =
  /(?<![\p{L}\p{N}_])(?:v|ver|version|versión|versione|release|build|firmware|rev|revision|patch|(?:upgrad|updat|downgrad)(?:e|ed|es|ing)\s+(?:to|from)|bump(?:ed)?\s+to)\.?\s*[:=]?\s*$/iu

/** `end`, or past the CIDR prefix length after it when there is one the family allows. */
function withPrefixLength(text: string, end: number, max: number): number {
  if (text.charCodeAt(end) !== 47) return end
  PREFIX_LENGTH.lastIndex = end
  const m = PREFIX_LENGTH.exec(text)
  return m !== null && Number(m[1]) <= max ? end + m[0].length : end
}

/**
 * Whether the quad at `start` continues a run of hex digits and colons (ffff:192.0.2.1 of an
 * IPv6 address glued to a word, 80:10.0.0.1) rather than follow a label (host:10.0.0.1,
 * IPv4:10.0.0.1): after `::`, or after a colon behind one to five hex digits that stand alone.
 */
function continuesHexRun(text: string, start: number): boolean {
  if (text.charCodeAt(start - 1) !== 58) return false
  if (text.charCodeAt(start - 2) === 58) return true
  let i = start - 2
  while (i >= 0 && i > start - 8 && HEX_DIGIT.test(text[i] as string)) i--
  const hex = start - 2 - i
  return hex >= 1 && hex <= 5 && !isWordAt(text, i)
}

function findIps(text: string, found: Span[]): void {
  const v6: Span[] = []
  if (text.includes(':') && COLON_PAIR.test(text)) {
    IPV6_CANDIDATE.lastIndex = 0
    for (let m = IPV6_CANDIDATE.exec(text); m !== null; m = IPV6_CANDIDATE.exec(text)) {
      const address = m[0]
      const zone = address.indexOf('%')
      if (HEX_DIGIT.test(address) && isIPv6(zone < 0 ? address : address.slice(0, zone))) {
        v6.push({ start: m.index, end: withPrefixLength(text, m.index + address.length, 128) })
      }
    }
  }
  found.push(...v6)
  if (!text.includes('.')) return
  IPV4_CANDIDATE.lastIndex = 0
  for (let m = IPV4_CANDIDATE.exec(text); m !== null; m = IPV4_CANDIDATE.exec(text)) {
    const start = m.index
    if (!isIPv4(m[0]) || v6.some((s) => s.start <= start && start < s.end)) continue
    if (continuesHexRun(text, start)) continue
    if (VERSION_CUE.test(text.slice(Math.max(0, start - 24), start))) continue
    found.push({ start, end: withPrefixLength(text, start + m[0].length, 32) })
  }
}

function findKeys(text: string, found: Span[]): void {
  found.push(...findApiKeys(text))
}

const FINDERS: Record<PiiKind, Finder> = {
  email: findEmails,
  phone: findPhones,
  credit_card: findCards,
  iban: findIbans,
  ssn: findSsns,
  ip_address: findIps,
  api_key: findKeys,
  crypto_wallet: findWallets,
  mac_address: findMacAddresses,
  ...IDENTITY_FINDERS,
  date_of_birth: findBirthDates,
}

/**
 * The fewest digits a candidate of each kind holds, all of them in one cluster: digits joined by
 * runs of spaces, parentheses, commas, dots, slashes and dashes, the separators of every kind's
 * pattern (cards 12, SSNs 9, phone numbers 7, IPv4 addresses 4; an Aadhaar number 12 unless its
 * groups are joined by colons). Kinds whose digits letters may split (a NINO's prefix, a fiscal
 * code's, a PAN's) count the longest cluster they must hold; a date of birth and a wallet address
 * need one digit.
 */
const MIN_DIGITS: Partial<Record<PiiKind, number>> = {
  credit_card: 12,
  ssn: 9,
  phone: 7,
  crypto_wallet: 1,
  date_of_birth: 1,
  us_itin: 9,
  us_bank_routing: 9,
  uk_nino: 6,
  uk_nhs: 10,
  es_nif: 7,
  es_nie: 7,
  pl_pesel: 11,
  in_aadhaar: 12,
  in_pan: 4,
  sg_nric: 7,
  au_tfn: 8,
  au_abn: 11,
  au_medicare: 10,
}
/**
 * One pass over what the kinds need: clusters of digits, each colon that starts a pair (an IPv6
 * candidate holds two colons with at most four hex digits between them), and `@`.
 */
const TRIGGER = /\d(?:[ (),./-]*\d)*|:(?=[0-9A-Fa-f]{0,4}:)|@/g
function isAsciiLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
}

/**
 * The kinds of `selected` whose candidates `text` may hold: a prefilter that proves most texts
 * hold none of most kinds, so that their candidate patterns are not run over the text at all.
 * One pass reads the digits cluster by cluster (the largest says which of cards, SSNs, phone
 * numbers and IPv4 addresses may be there, and an IBAN's check digits start a cluster right
 * after two letters), the colon pairs IPv6 needs and the `@` of an email. Sound by construction
 * (every candidate pattern needs what its kind is tested for here); a property test holds the
 * findings to those of every kind run on every text.
 */
export function possibleKinds(text: string, selected: readonly PiiKind[]): PiiKind[] {
  let digits = 0
  let iban = false
  let colons = false
  let at = false
  TRIGGER.lastIndex = 0
  for (let m = TRIGGER.exec(text); m !== null; m = TRIGGER.exec(text)) {
    const found = m[0]
    const first = found.charCodeAt(0)
    if (first === 58) colons = true
    else if (first === 64) at = true
    else {
      const count = found.length === 1 ? 1 : countDigits(found, 0, found.length)
      if (count > digits) digits = count
      if (
        !iban &&
        isDigitAt(found, 1) &&
        isAsciiLetter(text.charCodeAt(m.index - 1)) &&
        isAsciiLetter(text.charCodeAt(m.index - 2))
      )
        iban = true
      // Past 12 digits every digit kind may be there: the rest of a long text is not read, and
      // IBANs, colon pairs and `@` are taken to be there.
      if (digits >= 12) {
        iban = colons = at = true
        break
      }
    }
  }
  return selected.filter((kind) => {
    switch (kind) {
      case 'email':
        return at
      case 'iban':
        return iban
      case 'ip_address':
        return digits >= 4 || colons
      // A key, a MAC address (AA-BB-CC-DD-EE-FF) and a fiscal code whose digits are all replaced
      // by letters (omocodia) may hold no digit: their own patterns are the prefilter.
      case 'api_key':
      case 'mac_address':
      case 'it_fiscal_code':
        return true
      case 'in_aadhaar':
        return digits >= 12 || (digits >= 4 && colons)
      default:
        return digits >= (MIN_DIGITS[kind] as number)
    }
  })
}

/**
 * Every entity of `kinds` in `text`, in order of start (longer first at the same start); only
 * the kinds `possibleKinds` leaves unless `prefilter` is false (for the tests).
 */
export function findPii(
  text: string,
  kinds: readonly PiiKind[],
  prefilter = true,
): { kind: FindingKind; span: Span }[] {
  const spans: { kind: FindingKind; span: Span }[] = []
  for (const kind of prefilter ? possibleKinds(text, kinds) : kinds) {
    const found: Span[] = []
    FINDERS[kind](text, found)
    for (const span of found) spans.push({ kind, span })
  }
  if (spans.length > 1) spans.sort((a, b) => a.span.start - b.span.start || b.span.end - a.span.end)
  return spans
}

/**
 * A pii rule: every entity of the flagged kinds (all of them when `kinds` is null). Entities of
 * different kinds may overlap (a phone number inside a URL's credentials); redaction merges them.
 * Candidates are read and confirmed in the text's NFKC form (fold.ts, `nfkc`), as a reader sees
 * it: full-width digits (４１１１ １１１１ １１１１ １１１１), a full-width ＠ and dot, a no-break
 * space are the ASCII ones; spans map back to the text as sent. Text NFKC leaves as it is
 * (all ASCII text) is read as it is.
 */
export function piiMatcher(kinds: readonly PiiKind[] | null): TextMatcher {
  const selected = [...new Set(kinds ?? PII_KINDS)]
  return (target: TargetText): Finding[] => {
    const text = target.text
    // ASCII text, the common case, is its own NFKC form: read as it is, nothing kept.
    const normal = isAsciiText(target) ? null : nfkcTarget(target)
    const spans = findPii(normal === null ? text : normal.text, selected)
    if (spans.length === 0) return []
    const index = new CodePointIndex(text)
    if (normal?.start === undefined)
      return spans.map(({ kind, span }) => index.finding(kind, target, span.start, span.end))
    return spans.map(({ kind, span }) =>
      index.finding(kind, target, originalStart(normal, span.start), originalEnd(normal, span.end - 1)),
    )
  }
}
