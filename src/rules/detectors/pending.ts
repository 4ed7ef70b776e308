/**
 * Where a finding could still be in progress at the end of a text that may continue (streamed
 * replies, docs/chat-completions.md). Each detector answers with a UTF-16 offset `p` of `text`, at a
 * code point boundary, such that for every continuation `text + more`:
 * - every finding that starts before `p` is a finding of `text` alone, the same span, and
 * - every finding of `text` alone that starts before `p` is one of `text + more`.
 * Text before the smallest answer of a reply's enforced rules can be sent: no later text can
 * flag it, and a finding before it is final (the reply fails, whatever follows).
 *
 * The answers follow the candidates each detector reads (pii.ts, api-keys.ts, keywords.ts,
 * regex.ts): a run of digits and separators can still grow into a card, phone number, SSN or
 * IPv4 address; a run of address characters into an email; a word into a key; two letters and
 * digits into an IBAN; the automaton's state inside a phrase into a keyword. They are checked
 * against whole-text evaluation by the property test of test/unit/rules/stream.test.ts.
 */
import { isAscii } from './code-points.js'
import { isWordAt, nfkcOnce, originalStart } from './fold.js'
import type { PhraseSet } from './phrase-set.js'
import type { PiiKind } from './pii.js'

/** The earliest UTF-16 offset of `text` where a finding could still be in progress. */
export type PendingFrom = (text: string) => number

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff

/** `i`, moved back off the second half of a surrogate pair. */
function atCodePoint(text: string, i: number): number {
  return i > 0 && i < text.length && isLow(text.charCodeAt(i)) && isHigh(text.charCodeAt(i - 1)) ? i - 1 : i
}

/** The start of the run of units of `text` that `inRun` accepts ending at its end. */
function runStart(text: string, inRun: (c: number) => boolean): number {
  let i = text.length
  while (i > 0 && inRun(text.charCodeAt(i - 1))) i--
  return i
}

const isDigit = (c: number) => c >= 48 && c <= 57

/**
 * Cards, phone numbers, SSNs and IPv4 addresses are runs of digits joined by spaces, dots,
 * dashes, slashes, colons, parentheses and a leading + (and commas, for cards): the trailing run
 * of those characters, from its first digit, + or (, may still grow into one (or stop being one:
 * a card number that a letter or more digits continue is none).
 */
function numericPending(text: string, commas = false): number {
  const start = runStart(
    text,
    (c) =>
      isDigit(c) ||
      c === 32 ||
      c === 46 ||
      c === 45 ||
      c === 47 ||
      c === 58 ||
      c === 40 ||
      c === 41 ||
      c === 43 ||
      (commas && c === 44),
  )
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (isDigit(c) || c === 43 || c === 40) return i
  }
  return text.length
}

/**
 * An IBAN starts with two letters and two digits, then up to 30 letters or digits, optionally
 * grouped by single spaces or dashes; the tail is read within the longest candidate and its context.
 */
const IBAN_TAIL = /(?<![A-Za-z0-9])[A-Za-z](?:[A-Za-z](?:\d(?:\d(?:[ -]?[A-Za-z0-9]){0,30}[ -]?)?)?)?$/
function ibanPending(text: string): number {
  const from = Math.max(0, text.length - 72)
  const m = IBAN_TAIL.exec(text.slice(from))
  return m === null ? text.length : from + m.index
}

const EMAIL_CHAR = /[\p{L}\p{N}._%+@-]/u
/**
 * An email grows out of a run of local-part characters, an @ and a domain: the trailing run of
 * those characters may still become one, unless it holds no @ and is longer than a local part
 * may be (64 code points), since an @ after it could then start none.
 */
function emailPending(text: string): number {
  let i = text.length
  let points = 0
  let at = -1
  while (i > 0 && points <= 400) {
    let unit = i - 1
    if (unit > 0 && isLow(text.charCodeAt(unit)) && isHigh(text.charCodeAt(unit - 1))) unit--
    const c = text.slice(unit, i)
    if (!EMAIL_CHAR.test(c)) break
    if (c === '@') at = unit
    i = unit
    points++
  }
  if (at < 0) return points > 64 ? text.length : i
  // A local part ends at an @ and holds at most 130 UTF-16 units.
  return Math.max(0, Math.min(i, at - 130))
}

const IPV6_TAIL = /(?<![\w:.])[0-9A-Fa-f:][0-9A-Fa-f:.]*(?:%[\w.-]*)?(?:\/\d{0,3}[./]?)?$/
/**
 * IPv4 addresses are numeric runs; an IPv6 address is a run of hex digits, colons and dots (a
 * zone and a prefix length after it): the trailing one, when it holds a colon or is a hex word
 * short enough to be its first group.
 */
function ipPending(text: string): number {
  let pending = numericPending(text)
  const from = Math.max(0, text.length - 120)
  const m = IPV6_TAIL.exec(text.slice(from))
  if (m !== null && (m[0].includes(':') || m[0].length <= 4)) pending = Math.min(pending, from + m.index)
  return pending
}

const PEM_PARTIAL = /-[A-Z0-9 -]{0,70}$/
/** What every key with a known prefix begins with (api-keys.ts); the Slack webhook in lower case. */
const KEY_PREFIXES = [
  'sk-',
  'sk_live_',
  'sk_test_',
  'rk_live_',
  'rk_test_',
  'pk_live_',
  'pk_test_',
  'AKIA',
  'ASIA',
  'ABIA',
  'ACCA',
  'AGPA',
  'AIDA',
  'AROA',
  'AIPA',
  'ANPA',
  'ANVA',
  'A3T',
  'ghp_',
  'gho_',
  'ghu_',
  'ghs_',
  'ghr_',
  'github_pat_',
  'xox',
  'xapp-',
  'AIza',
  'npm_',
  'lin_api_',
  'SG.',
  'shpat_',
  'shpca_',
  'shppa_',
  'shpss_',
  'ops_ey',
]
const SLACK_HOOK = 'https://hooks.slack.com/'
const AWS_SECRET_CUE = /aws_?secret_?access_?key/i

/** Whether `tail` is, or may still become, text that begins with `prefix`. */
const mayBegin = (tail: string, prefix: string) =>
  tail.length >= prefix.length ? tail.startsWith(prefix) : prefix.startsWith(tail)

/**
 * Keys are words (a token up to the next whitespace), and a private key block runs from its BEGIN
 * line to its END line. In the trailing word, a key may still be in progress only from a position
 * where a known prefix begins or may begin, after `://` (the credentials of a URL), or anywhere
 * when an AWS secret's cue is near (its value has no prefix); a BEGIN line being written and a
 * block not yet ended are pending too.
 */
function keyPending(text: string): number {
  const word = runStart(text, (c) => !(c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000))
  // Other Unicode spaces end no key candidate: only those above, which the patterns never hold.
  let pending = text.length
  if (word < text.length) {
    if (AWS_SECRET_CUE.test(text.slice(Math.max(0, word - 200)))) pending = word
    else {
      const scheme = text.indexOf('://', word)
      if (scheme >= 0) pending = scheme + 3
      const lower = text.slice(word).toLowerCase()
      for (let k = word; k < pending; k++) {
        const tail = text.slice(k)
        if (
          KEY_PREFIXES.some((prefix) => mayBegin(tail, prefix)) ||
          mayBegin(lower.slice(k - word), SLACK_HOOK)
        ) {
          pending = k
          break
        }
      }
    }
  }
  const from = Math.max(0, text.length - 72)
  const partial = PEM_PARTIAL.exec(text.slice(from))
  if (partial !== null) pending = Math.min(pending, from + partial.index)
  const begin = text.lastIndexOf('-----BEGIN')
  if (begin >= 0 && text.indexOf('-----END', begin) < 0) pending = Math.min(pending, begin)
  return pending
}

/**
 * The pattern of every prefix of a candidate made of `tokens` (each one character, or an optional
 * one: `' ?'`), the whole candidate and an optional `trailing` character included: the candidate
 * may be in progress while the text ends in any of them. `T1(?:T2(?:T3)?)?`.
 */
function prefixes(tokens: readonly string[], trailing = ''): string {
  return tokens.reduceRight((rest, token) => `${token}(?:${rest})?`, trailing === '' ? '' : `${trailing}?`)
}
const repeat = (token: string, n: number): string[] => Array.from({ length: n }, () => token)
const D = String.raw`\d`
const L = '[A-Za-z]'
/**
 * Kinds whose candidates are a short template of letters, digits and separators (wallets, MAC
 * addresses, NINO, NIF, NIE, fiscal codes, PAN, NRIC): the text's end may be inside one where a
 * prefix of the template ends it, starting where a candidate may start, within the longest
 * candidate and the unit after it. Looser than the candidate patterns (any letter where the
 * pattern wants a few), which only ever holds back more.
 */
function templatePending(longest: number, pattern: string): PendingFrom {
  const tail = new RegExp(`(?:${pattern})$`)
  return (text) => {
    const from = Math.max(0, text.length - longest - 1)
    const m = tail.exec(text.slice(from))
    return m === null ? text.length : from + m.index
  }
}
const HEX = '[0-9A-Fa-f]'
const BASE58 = '[1-9A-HJ-NP-Za-km-z]'
const WALLET_PENDING = templatePending(
  90,
  `(?<![A-Za-z0-9])(?:[13]${BASE58}{0,34}|[bB](?:[cC](?:1[0-9A-Za-z]{0,87})?)?|0(?:x${HEX}{0,40})?)`,
)
const MAC_PENDING = templatePending(
  18,
  `(?<![0-9A-Za-z])(?:${prefixes([...repeat(HEX, 2), ...[1, 2, 3, 4, 5].flatMap(() => ['[:-]', HEX, HEX])], '[:.-]')}|${prefixes([...repeat(HEX, 4), String.raw`\.`, ...repeat(HEX, 4), String.raw`\.`, ...repeat(HEX, 4)], '[:.-]')})`,
)
const ID_START = String.raw`(?<![\w-])`
const NINO_PENDING = templatePending(
  13,
  `${ID_START}${prefixes([L, L, ' ?', D, D, ' ?', D, D, ' ?', D, D, ' ?', '[A-Da-d]'])}`,
)
const NIF_PENDING = templatePending(
  10,
  `${ID_START}(?:${prefixes(['[KLMklm]', ...repeat(D, 7), '-?', L])}|${prefixes([...repeat(D, 7), `${D}?`, '-?', L])})`,
)
const NIE_PENDING = templatePending(10, `${ID_START}${prefixes(['[XYZxyz]', ...repeat(D, 7), '-?', L])}`)
const FISCAL = '[0-9LMNPQRSTUV]'
const FISCAL_PENDING = templatePending(
  16,
  `${ID_START}${prefixes([...repeat('[A-Z]', 6), FISCAL, FISCAL, '[A-Z]', FISCAL, FISCAL, '[A-Z]', FISCAL, FISCAL, FISCAL, '[A-Z]'])}`,
)
const PAN_PENDING = templatePending(
  10,
  `${ID_START}${prefixes([...repeat('[A-Z]', 5), ...repeat(D, 4), '[A-Z]'])}`,
)
const NRIC_PENDING = templatePending(9, `${ID_START}${prefixes(['[STFGMstfgm]', ...repeat(D, 7), L])}`)
/** Numbers read in digit groups: the trailing run of digits and separators, commas included (see AFTER in identity-numbers.ts). */
const groupedPending: PendingFrom = (text) => numericPending(text, true)
/**
 * A date of birth is a date of at most 40 units after a cue and at most 40 units of joining
 * words: one may be in progress only within the last 40 units, and only when a cue ends within
 * the last 100 (a cue being written is followed by no date yet).
 */
const BIRTH_CUE_TAIL =
  /(?<![\p{L}\p{N}])(?:birth|birthday|birth ?date|born|d\.?o\.?b\.?|geboren|geburtsdatum|geburtstag|née?|naissance|nacimiento|nacid[oa]|nascita|nat[oa]|nascimento|nascid[oa])(?![\p{L}\p{N}])/iu
function birthDatePending(text: string): number {
  return BIRTH_CUE_TAIL.test(text.slice(Math.max(0, text.length - 100)))
    ? Math.max(0, text.length - 42)
    : text.length
}

const PENDING_BY_KIND: Record<PiiKind, PendingFrom> = {
  // A card inside a valid IBAN is none: the IBAN's tail counts for cards too.
  credit_card: (text) => Math.min(numericPending(text, true), ibanPending(text)),
  phone: numericPending,
  ssn: numericPending,
  iban: ibanPending,
  email: emailPending,
  ip_address: ipPending,
  api_key: keyPending,
  crypto_wallet: WALLET_PENDING,
  mac_address: MAC_PENDING,
  us_itin: groupedPending,
  us_bank_routing: groupedPending,
  uk_nino: NINO_PENDING,
  uk_nhs: groupedPending,
  es_nif: NIF_PENDING,
  es_nie: NIE_PENDING,
  it_fiscal_code: FISCAL_PENDING,
  pl_pesel: groupedPending,
  in_aadhaar: groupedPending,
  in_pan: PAN_PENDING,
  sg_nric: NRIC_PENDING,
  au_tfn: groupedPending,
  au_abn: groupedPending,
  au_medicare: groupedPending,
  date_of_birth: birthDatePending,
}

/**
 * A pii rule's pending offset: the earliest of its kinds'. The rule reads the text's NFKC form
 * (pii.ts), so the answers are those of that form, mapped back (full-width digits are digits
 * still in progress); in text beyond ASCII, the last character is held too, since a combining
 * mark still to come may compose with it.
 */
export function piiPending(kinds: readonly PiiKind[]): PendingFrom {
  const finders = [...new Set(kinds)].map((kind) => PENDING_BY_KIND[kind])
  const earliest = (text: string) => {
    let pending = text.length
    for (const find of finders) pending = Math.min(pending, find(text))
    return pending
  }
  return (text) => {
    if (isAscii(text)) return earliest(text)
    const normal = nfkcOnce(text)
    const found = earliest(normal.text)
    const pending = found >= normal.text.length ? text.length : originalStart(normal, found)
    return atCodePoint(text, Math.min(pending, lastPieceStart(text)))
  }
}

/**
 * A keywords rule's pending offset: where the longest suffix of the folded text that starts a
 * phrase begins (the automaton's depth), and at the latest the last base character, which a
 * combining mark still to come would fold with. A scan starts at the previous answer for a
 * prefix of the text (the automaton's state never reaches further back).
 */
export function keywordsPending(set: PhraseSet): (text: string, from?: number) => number {
  return (text, from = 0) => {
    if (set.empty || text.length === 0) return text.length
    // Only a letter or number that marks may still join can fold into another.
    const piece = lastPieceStart(text)
    const last = isWordAt(text, piece) ? piece : text.length
    const start = Math.min(from, last)
    // The phrase under way at the end, and the one before the last base character, which marks
    // still to come may fold into another letter (cafe + U+0301 reads café).
    const atEnd = set.pendingStart(text.slice(start))
    const beforeLast = last < text.length ? set.pendingStart(text.slice(start, last)) : atEnd
    return start + Math.min(atEnd, beforeLast, last - start)
  }
}

const COMBINING = /[\p{M}\u1160-\u11ff\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff]/u
/** Where the last base character of `text` starts, with the marks and invisible characters after it. */
function lastPieceStart(text: string): number {
  let i = text.length
  while (i > 0) {
    let unit = i - 1
    if (unit > 0 && isLow(text.charCodeAt(unit)) && isHigh(text.charCodeAt(unit - 1))) unit--
    i = unit
    if (!COMBINING.test(text.slice(unit, unit + 2))) break
  }
  return i
}

/**
 * A length rule holds nothing back up to its maximum, and releases nothing past it: the rule
 * fails as soon as the text is longer.
 */
export function lengthPending(max: number): PendingFrom {
  return (text) => {
    if (text.length <= max) return text.length
    let i = 0
    for (let n = 0; n < max && i < text.length; n++)
      i += isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1)) ? 2 : 1
    return i
  }
}

/**
 * A regex rule's pending offset: its longest match, in code points, back from the end when the
 * pattern's matches are bounded (plus the one code point its `$` or `\b` may read); else the
 * start of the current line, or of the text when a match can hold a line break.
 */
export function regexPending(pattern: string): PendingFrom {
  const shape = regexShape(pattern)
  if (shape.maxLength !== null) {
    const hold = shape.maxLength + 1
    const { literal, ignoreCase } = leadingLiteral(pattern)
    return (text) => {
      let i = text.length
      for (let n = 0; n < hold && i > 0; n++) {
        i--
        if (i > 0 && isLow(text.charCodeAt(i)) && isHigh(text.charCodeAt(i - 1))) i--
      }
      if (literal === '') return i
      // Every match begins with `literal`: only a position where the rest of the text starts
      // with it, or is the start of it, can begin a match still in progress.
      // RE2's case folding also pairs the long s with s and the Kelvin sign with k.
      const tail = ignoreCase ? text.slice(i).toLowerCase().replace(/ſ/g, 's') : text.slice(i)
      for (let k = 0; k < tail.length; k++) {
        if (isLow(tail.charCodeAt(k))) continue
        const rest = tail.length - k
        if (rest >= literal.length ? tail.startsWith(literal, k) : literal.startsWith(tail.slice(k)))
          return i + k
      }
      return text.length
    }
  }
  if (shape.crossesLines) return () => 0
  // The line break before the current line may be read by a `\s` or `\b` at its start: hold it too.
  return (text) => Math.max(0, text.lastIndexOf('\n'))
}

/**
 * The text every match of a pattern begins with, when the pattern shows it plainly: after
 * leading flags (`(?i)`), `^` and `\b`, the run of literal characters (escaped punctuation
 * included) up to the first class, group, alternation or quantifier (a quantified character is
 * not part of it). Empty when there is none, when the pattern has an alternation outside a class,
 * or when case-insensitive matching meets a character beyond ASCII (whose case folding RE2 may
 * read more widely than lower-casing).
 */
export function leadingLiteral(pattern: string): { literal: string; ignoreCase: boolean } {
  const none = { literal: '', ignoreCase: false }
  let i = 0
  let ignoreCase = false
  const flags = /^\(\?([a-zA-Z]+)\)/.exec(pattern)
  if (flags) {
    ignoreCase = (flags[1] as string).includes('i')
    i = flags[0].length
  }
  // An alternation outside every group and class can start a match elsewhere: give up.
  if (topLevelAlternation(pattern)) return none
  let literal = ''
  while (i < pattern.length) {
    const c = pattern[i] as string
    if (c === '^' && literal === '') {
      i++
      continue
    }
    if (c === '\\') {
      const next = pattern[i + 1] ?? ''
      if (next === 'b' && literal === '') {
        i += 2
        continue
      }
      if (!/[-.^$*+?()[\]{}|\\/ #&~"'@:,;!%=<>]/.test(next)) break
      literal += next
      i += 2
    } else if ('.[](){}|*+?$'.includes(c)) break
    else {
      literal += c
      i += c.length
    }
    // A quantifier makes the character before it optional or repeated: not part of the literal.
    if (i < pattern.length && '*+?{'.includes(pattern[i] as string)) {
      literal = literal.slice(0, -1)
      break
    }
  }
  if (ignoreCase) {
    if (/[^ -~]/.test(literal)) return none
    literal = literal.toLowerCase()
  }
  return { literal, ignoreCase }
}

/** Whether a pattern has a `|` outside every group and character class. */
function topLevelAlternation(pattern: string): boolean {
  let depth = 0
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === '\\') i++
    else if (c === '[') {
      // Skip the class: a `]` right after `[` or `[^` is a member.
      i++
      if (pattern[i] === '^') i++
      if (pattern[i] === ']') i++
      while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : 1
    } else if (c === '(') depth++
    else if (c === ')') depth--
    else if (c === '|' && depth === 0) return true
  }
  return false
}

/** What a regex's matches may be: their longest length in code points (null: unbounded), and whether one can hold a line break. */
export interface RegexShape {
  maxLength: number | null
  crossesLines: boolean
}

/**
 * A small reading of an RE2 pattern: the longest match of each alternative, quantifiers
 * multiplying it (`*`, `+` and `{n,}` unbounded), and whether anything in it can match a line
 * break (`.` under the `s` flag, `\s`, negated classes and escapes, `\n`, `\r`, `\p`, …, read
 * generously: a pattern taken to cross lines is held to the end of the reply, which is safe).
 */
export function regexShape(pattern: string): RegexShape {
  let i = 0
  let dotAll = false
  let crossesLines = false
  const INF = Number.POSITIVE_INFINITY

  /** One alternation up to `)` or the end: its longest length. */
  const alternation = (): number => {
    let best = 0
    for (;;) {
      best = Math.max(best, sequence())
      if (pattern[i] === '|') {
        i++
        continue
      }
      return best
    }
  }
  const sequence = (): number => {
    let total = 0
    while (i < pattern.length && pattern[i] !== '|' && pattern[i] !== ')') {
      let atom = atomLength()
      // Quantifiers (several may follow: `a{2}?`, and RE2 refuses `a**`).
      for (;;) {
        const q = pattern[i]
        if (q === '*' || q === '+') {
          i++
          if (atom > 0) atom = INF
        } else if (q === '?') {
          i++
        } else if (q === '{') {
          const m = /^\{(\d*)(,?)(\d*)\}/.exec(pattern.slice(i))
          if (m === null) break
          i += m[0].length
          const max = m[2] === '' ? Number(m[1]) : m[3] === '' ? INF : Number(m[3])
          atom = atom === 0 ? 0 : atom * max
        } else break
        if (pattern[i] === '?') i++
      }
      total += atom
    }
    return total
  }
  const atomLength = (): number => {
    const c = pattern[i] as string
    if (c === '(') {
      i++
      // Flags and group kinds: (?:…), (?P<name>…), (?<name>…), (?i), (?s:…).
      let scopedDotAll = dotAll
      if (pattern[i] === '?') {
        const m = /^\?(?:P?<[^>]*>|([a-zA-Z-]*)(:|\)))/.exec(pattern.slice(i))
        if (m !== null) {
          i += m[0].length
          const flags = m[1] ?? ''
          const on = flags.split('-')[0] ?? ''
          if (on.includes('s')) scopedDotAll = true
          if (m[2] === ')') {
            // (?s) sets the flag for the rest of the enclosing group.
            dotAll = scopedDotAll
            return 0
          }
        }
      }
      const outer = dotAll
      dotAll = scopedDotAll
      const length = alternation()
      dotAll = outer
      if (pattern[i] === ')') i++
      return length
    }
    if (c === '[') {
      const m = /^\[\^?\]?(?:\[:[a-z]+:\]|\\.|[^\]])*\]/s.exec(pattern.slice(i))
      const cls = m?.[0] ?? pattern.slice(i)
      i += cls.length
      if (cls.startsWith('[^') || /\\[nrsvfDWSpPx]|\[:(?:space|cntrl|print|graph):\]|\n|\r/.test(cls))
        crossesLines = true
      return 1
    }
    if (c === '\\') {
      const next = pattern[i + 1] ?? ''
      i += 2
      if ('AzbBZ'.includes(next)) return 0
      if (next === 'p' || next === 'P') {
        if (pattern[i] === '{') i = pattern.indexOf('}', i) + 1 || pattern.length
        else i++
        crossesLines = true
        return 1
      }
      if (next === 'x') {
        if (pattern[i] === '{') i = pattern.indexOf('}', i) + 1 || pattern.length
        else i += 2
        crossesLines = true
        return 1
      }
      if (next === 'Q') {
        const end = pattern.indexOf('\\E', i)
        const literal = end < 0 ? pattern.slice(i) : pattern.slice(i, end)
        i = end < 0 ? pattern.length : end + 2
        if (/[\n\r]/.test(literal)) crossesLines = true
        return [...literal].length
      }
      if ('nrsvfDWS'.includes(next) || /[0-7]/.test(next)) crossesLines = true
      return 1
    }
    if (c === '^' || c === '$') {
      i++
      return 0
    }
    if (c === '.') {
      i++
      if (dotAll) crossesLines = true
      return 1
    }
    const point = pattern.codePointAt(i) as number
    i += point > 0xffff ? 2 : 1
    if (point === 10 || point === 13) crossesLines = true
    return 1
  }

  const length = alternation()
  // A stray `)` (RE2 would have refused the pattern): read nothing more into it.
  if (i < pattern.length) return { maxLength: null, crossesLines: true }
  return { maxLength: Number.isFinite(length) ? length : null, crossesLines }
}
