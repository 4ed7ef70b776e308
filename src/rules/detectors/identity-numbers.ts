import { validate as isAbn } from 'stdnum/lib/cjs/au/abn.js'
import { validate as isTfn } from 'stdnum/lib/cjs/au/tfn.js'
import { validate as isNie } from 'stdnum/lib/cjs/es/nie.js'
import { validate as isNif } from 'stdnum/lib/cjs/es/nif.js'
import { validate as isNino } from 'stdnum/lib/cjs/gb/nino.js'
import { validate as isAadhaar } from 'stdnum/lib/cjs/in/aadhaar.js'
import { validate as isPan } from 'stdnum/lib/cjs/in/pan.js'
import { validate as isFiscalCode } from 'stdnum/lib/cjs/it/codicefiscale.js'
import { validate as isPesel } from 'stdnum/lib/cjs/pl/pesel.js'
import type { Span } from './api-keys.js'

/**
 * National identity and tax numbers, each confirmed the way its issuer defines it: the check
 * digit or letter, the ranges the issuer hands out, the date a number encodes. python-stdnum's
 * rules, as the `stdnum` package ports them, confirm the numbers it covers (AU ABN and TFN, ES
 * NIF and NIE, UK NINO, IN Aadhaar and PAN, IT codice fiscale, PL PESEL); the rest are a few
 * lines each here (US ITIN and ABA routing number, UK NHS number, SG NRIC/FIN, AU Medicare).
 *
 * A number whose only confirmation is a check digit of one in ten or eleven and no shape of its
 * own (nine, ten, eleven or twelve bare digits; a 3-3-4 group that is as often a phone number)
 * counts only right after a cue that names it ("routing number", "NHS", "TFN", "PESEL"), as bare
 * SSNs do (pii.ts): a random number of that length passes one check in ten, and a pii rule that
 * flags every kind would call every tenth order number an identity number. The table in
 * docs/evaluation.md says which forms each kind is read in.
 */

type Finder = (text: string, found: Span[]) => void

const NOT_DIGIT = /\D/g
const digitsOf = (s: string) => s.replace(NOT_DIGIT, '')

/**
 * Whether a cue of `cue` (a pattern of words, case-insensitive) ends right before `start`, with
 * only punctuation and the words that join a name to its value between ("NHS number is",
 * "routing no.:", "PESEL:").
 */
function cuedBefore(text: string, start: number, cue: RegExp): boolean {
  return cue.test(text.slice(Math.max(0, start - 60), start))
}
/** A cue pattern for `words`: the words, then at most three joining words and punctuation, at the end. */
function cuePattern(words: string): RegExp {
  return new RegExp(
    String.raw`(?<![\p{L}\p{N}])(?:${words})(?![\p{L}\p{N}])(?:[^\p{L}\p{N}\n]{0,4}(?:number|num|nr|no|is|was|of|:|#|n°|nº|numer|numero|número)(?![\p{L}\p{N}])){0,3}[^\p{L}\p{N}\n]{0,4}$`,
    'iu',
  )
}

/** Runs `pattern` (global, group 1 the number as written) over `text`, keeping what `accept` confirms. */
function scan(
  text: string,
  found: Span[],
  pattern: RegExp,
  accept: (written: string, start: number) => boolean,
) {
  pattern.lastIndex = 0
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    const written = m[1] ?? m[0]
    const start = m.index + m[0].length - written.length
    if (accept(written, start)) found.push({ start, end: start + written.length })
  }
}

// Digits not inside a longer run of digits, letters or digit groups.
const BEFORE = String.raw`(?<![\w.,/-]|\d[ ])`
const AFTER = String.raw`(?![\w]|[.,/-]\w|[ ]\d)`

/**
 * US Individual Taxpayer Identification Numbers (IRS): nine digits, the first a 9 and the fourth
 * and fifth 50–65, 70–88, 90–92 or 94–99. Written like an SSN (9XX-XX-XXXX, or with spaces) they
 * count anywhere; nine bare digits only after a cue (ITIN, taxpayer identification number).
 */
const ITIN_GROUPED = new RegExp(String.raw`${BEFORE}(9\d{2}([- ])\d{2}\2\d{4})${AFTER}`, 'g')
const ITIN_BARE = new RegExp(String.raw`${BEFORE}(9\d{8})${AFTER}`, 'g')
const ITIN_CUE = cuePattern('itin|(?:individual )?taxpayer identification|tax ?id|tin')
export function isItin(digits: string): boolean {
  if (digits.length !== 9 || digits[0] !== '9') return false
  const group = Number(digits.slice(3, 5))
  return (
    (group >= 50 && group <= 65) ||
    (group >= 70 && group <= 88) ||
    (group >= 90 && group <= 92) ||
    group >= 94
  )
}
function findItins(text: string, found: Span[]): void {
  scan(text, found, ITIN_GROUPED, (written) => isItin(digitsOf(written)))
  scan(text, found, ITIN_BARE, (written, start) => cuedBefore(text, start, ITIN_CUE) && isItin(written))
}

/**
 * US bank routing numbers (ABA routing transit numbers): nine digits whose first two are a Federal
 * Reserve routing symbol (00–12, 21–32, 61–72, 80) and whose weighted sum (3, 7, 1) is a multiple
 * of ten. Written 4-4-1 as on a cheque's MICR line they count anywhere; nine bare digits only after
 * a cue (routing, ABA, RTN, transit number).
 */
const ABA_GROUPED = new RegExp(String.raw`${BEFORE}(\d{4}-\d{4}-\d)${AFTER}`, 'g')
const ABA_BARE = new RegExp(String.raw`${BEFORE}(\d{9})${AFTER}`, 'g')
const ABA_CUE = cuePattern('routing|aba|rtn|routing transit|transit|bank routing')
export function isAbaRouting(digits: string): boolean {
  if (digits.length !== 9) return false
  const symbol = Number(digits.slice(0, 2))
  if (!(symbol <= 12 || (symbol >= 21 && symbol <= 32) || (symbol >= 61 && symbol <= 72) || symbol === 80))
    return false
  let sum = 0
  for (let i = 0; i < 9; i++) sum += (digits.charCodeAt(i) - 48) * ([3, 7, 1][i % 3] as number)
  return sum % 10 === 0 && digits !== '000000000'
}
function findRoutingNumbers(text: string, found: Span[]): void {
  scan(text, found, ABA_GROUPED, (written) => isAbaRouting(digitsOf(written)))
  scan(text, found, ABA_BARE, (written, start) => cuedBefore(text, start, ABA_CUE) && isAbaRouting(written))
}

/**
 * UK National Insurance numbers (HMRC): two prefix letters (neither D, F, I, Q, U or V, the second
 * not O, and not BG, GB, KN, NK, NT, TN or ZZ), six digits and a suffix A–D, optionally spaced in
 * pairs (AB 12 34 56 C); in upper case as HMRC writes them or all in lower case.
 */
const NINO_CANDIDATE = /(?<![\w-])([A-Za-z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-Da-d])(?![\w-])/g
const UPPER = /[A-Z]/
const LOWER = /[a-z]/
function findNinos(text: string, found: Span[]): void {
  scan(text, found, NINO_CANDIDATE, (written) => {
    if (UPPER.test(written) && LOWER.test(written)) return false
    return isNino(written.replaceAll(' ', '').toUpperCase()).isValid
  })
}

/**
 * UK NHS numbers (NHS England, Wales, Isle of Man): ten digits whose last is the mod-11 check digit
 * of the first nine (weights 10 to 2; a remainder giving 10 is never issued). Written 3-3-4 like a
 * phone number or bare, so counted only after a cue (NHS, health service, CHI is Scotland's own).
 */
const NHS_CANDIDATE = new RegExp(String.raw`${BEFORE}(\d{3}([- ]?)\d{3}\2\d{4})${AFTER}`, 'g')
const NHS_CUE = cuePattern('nhs|national health service|health service|nhs no')
export function isNhsNumber(digits: string): boolean {
  if (digits.length !== 10) return false
  let sum = 0
  for (let i = 0; i < 9; i++) sum += (digits.charCodeAt(i) - 48) * (10 - i)
  const check = 11 - (sum % 11)
  if (check === 10) return false
  return (check === 11 ? 0 : check) === digits.charCodeAt(9) - 48 && !/^(\d)\1{9}$/.test(digits)
}
function findNhsNumbers(text: string, found: Span[]): void {
  scan(
    text,
    found,
    NHS_CANDIDATE,
    (written, start) => cuedBefore(text, start, NHS_CUE) && isNhsNumber(digitsOf(written)),
  )
}

/**
 * Spanish NIF of a person: a DNI's eight digits (seven with the leading zero left out) or K, L or M
 * and seven digits, then the check letter of the number mod 23, optionally after a dash.
 */
const NIF_CANDIDATE = /(?<![\w-])((?:[KLMklm]\d{7}|\d{7,8})-?[A-Za-z])(?![\w-])/g
function findNifs(text: string, found: Span[]): void {
  scan(text, found, NIF_CANDIDATE, (written) => {
    let value = written.replace('-', '').toUpperCase()
    if (value.length === 8) value = `0${value}`
    return isNif(value).isValid
  })
}

/** Spanish NIE (a foreigner's number): X, Y or Z, seven digits and the check letter (mod 23). */
const NIE_CANDIDATE = /(?<![\w-])([XYZxyz]\d{7}-?[A-Za-z])(?![\w-])/g
function findNies(text: string, found: Span[]): void {
  scan(text, found, NIE_CANDIDATE, (written) => {
    if (UPPER.test(written) && LOWER.test(written)) return false
    return isNie(written.replace('-', '').toUpperCase()).isValid
  })
}

/**
 * Italian codice fiscale of a person: six letters of the name, the year, month letter and day
 * (plus 40 for women) of birth, the place's code and the check character; the digits may be
 * replaced by letters (omocodia) when two people would share one. In upper case, as issued; the
 * check character (`stdnum`) and the day of birth confirm it.
 */
const FISCAL_DIGIT = '[0-9LMNPQRSTUV]'
/** Upper case only: a pattern that also reads lower case tries every word of prose (5× the time). */
const FISCAL_CANDIDATE = new RegExp(
  `(?<![\\w-])([A-Z]{6}${FISCAL_DIGIT}{2}[ABCDEHLMPRST]${FISCAL_DIGIT}{2}[A-Z]${FISCAL_DIGIT}{3}[A-Z])(?![\\w-])`,
  'g',
)
/** The month letters (A January … T December) and the letters omocodia puts for the digits 0–9. */
const FISCAL_MONTHS = 'ABCDEHLMPRST'
const OMOCODIA = 'LMNPQRSTUV'
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
const fiscalDigit = (c: string) => (c >= '0' && c <= '9' ? Number(c) : OMOCODIA.indexOf(c))
/**
 * Whether an upper-case codice fiscale holds a day of birth its month has (1–31, plus 40 for
 * women; 29 February allowed, the century being unknown), a check the `stdnum` port leaves out.
 */
function hasBirthDay(code: string): boolean {
  const month = FISCAL_MONTHS.indexOf(code[8] as string) + 1
  const day = fiscalDigit(code[9] as string) * 10 + fiscalDigit(code[10] as string)
  const date = day > 40 ? day - 40 : day
  return month > 0 && date >= 1 && date <= (DAYS_IN_MONTH[month - 1] as number)
}
/**
 * The check character's values of each character in an odd position (the first, third, …; A and
 * 0 alike, B and 1, …), as the decree (DM 23/12/1976) tabulates them; in an even position a
 * character counts its place in 0–9 or A–Z.
 */
const FISCAL_ODD = [
  1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23,
]
/**
 * Whether an upper-case candidate's last character is its check character: one in 26 candidates
 * is. `stdnum`'s validate costs 12–18 µs a candidate (it builds an Error for each invalid one),
 * this well under one: only what passes it is asked of the library.
 */
function hasCheckCharacter(code: string): boolean {
  let sum = 0
  for (let i = 0; i < 15; i++) {
    const c = code.charCodeAt(i)
    const value = c <= 57 ? c - 48 : c - 65
    sum += i % 2 === 0 ? (FISCAL_ODD[value] as number) : value
  }
  return code.charCodeAt(15) - 65 === sum % 26
}
function findFiscalCodes(text: string, found: Span[]): void {
  scan(
    text,
    found,
    FISCAL_CANDIDATE,
    (code) => hasCheckCharacter(code) && hasBirthDay(code) && isFiscalCode(code).isValid,
  )
}

/**
 * Polish PESEL: eleven digits holding the date of birth (the month offset by the century) and a
 * check digit (weights 1, 3, 7, 9). Always bare digits, and a UK mobile number passes one time in
 * ten: counted only after a cue (PESEL).
 */
const PESEL_CANDIDATE = new RegExp(String.raw`${BEFORE}(\d{11})${AFTER}`, 'g')
const PESEL_CUE = cuePattern('pesel')
function findPesels(text: string, found: Span[]): void {
  scan(
    text,
    found,
    PESEL_CANDIDATE,
    (written, start) => cuedBefore(text, start, PESEL_CUE) && isPesel(written).isValid,
  )
}

/**
 * Indian Aadhaar numbers (UIDAI): twelve digits, the first 2–9, not a palindrome, with a Verhoeff
 * check digit. Printed 4-4-4 (spaces, dashes or colons between) they count anywhere; twelve bare
 * digits only after a cue (Aadhaar, UID, आधार).
 */
const AADHAAR_GROUPED = new RegExp(
  String.raw`${BEFORE}(?<!\d:)([2-9]\d{3}([ :-])\d{4}\2\d{4})${AFTER}(?!:\d)`,
  'g',
)
const AADHAAR_BARE = new RegExp(String.raw`${BEFORE}([2-9]\d{11})${AFTER}`, 'g')
const AADHAAR_CUE = cuePattern('aadhaar|aadhar|uid|uidai|आधार')
function findAadhaars(text: string, found: Span[]): void {
  scan(text, found, AADHAAR_GROUPED, (written) => isAadhaar(digitsOf(written)).isValid)
  scan(
    text,
    found,
    AADHAAR_BARE,
    (written, start) => cuedBefore(text, start, AADHAAR_CUE) && isAadhaar(written).isValid,
  )
}

/**
 * Indian PAN (Income Tax Department): five letters, four digits (not 0000) and a letter, the
 * fourth letter the holder's type (P a person, C a company, H, F, A, T, B, L, J, G). The last
 * letter is a check character whose algorithm the department does not publish: the format is all
 * there is to confirm. Upper case only, as issued.
 */
const PAN_CANDIDATE = /(?<![\w-])([A-Z]{5}\d{4}[A-Z])(?![\w-])/g
function findPans(text: string, found: Span[]): void {
  scan(text, found, PAN_CANDIDATE, (written) => isPan(written).isValid)
}

/**
 * Singapore NRIC and FIN (ICA): S, T, F, G or M, seven digits and a check letter of the weighted
 * sum (2, 7, 6, 5, 4, 3, 2; plus 4 for T and G, 3 for M) mod 11, from the prefix's own table.
 * Upper case, or all lower case.
 */
const NRIC_CANDIDATE = /(?<![\w-])([STFGMstfgm]\d{7}[A-Za-z])(?![\w-])/g
const NRIC_LETTERS: Readonly<Record<string, string>> = {
  S: 'JZIHGFEDCBA',
  T: 'JZIHGFEDCBA',
  F: 'XWUTRQPNMLK',
  G: 'XWUTRQPNMLK',
  M: 'XWUTRQPNJLK',
}
const NRIC_WEIGHTS = [2, 7, 6, 5, 4, 3, 2]
export function isNric(value: string): boolean {
  const prefix = value[0] as string
  const letters = NRIC_LETTERS[prefix]
  if (letters === undefined || value.length !== 9) return false
  let sum = prefix === 'T' || prefix === 'G' ? 4 : prefix === 'M' ? 3 : 0
  for (let i = 0; i < 7; i++) sum += (value.charCodeAt(i + 1) - 48) * (NRIC_WEIGHTS[i] as number)
  return letters[sum % 11] === value[8]
}
function findNrics(text: string, found: Span[]): void {
  scan(text, found, NRIC_CANDIDATE, (written) => {
    if (UPPER.test(written) && LOWER.test(written)) return false
    return isNric(written.toUpperCase())
  })
}

/**
 * Australian Tax File Numbers (ATO): eight or nine digits whose weighted sum (1, 4, 3, 7, 5, 8, 6,
 * 9, 10) is a multiple of 11. Bare or 3-3-3, and as often another number: counted only after a cue
 * (TFN, tax file number).
 */
const TFN_CANDIDATE = new RegExp(String.raw`${BEFORE}(\d{3}([ -]?)\d{3}\2\d{2,3})${AFTER}`, 'g')
const TFN_CUE = cuePattern('tfn|tax file')
function findTfns(text: string, found: Span[]): void {
  scan(
    text,
    found,
    TFN_CANDIDATE,
    (written, start) => cuedBefore(text, start, TFN_CUE) && isTfn(digitsOf(written)).isValid,
  )
}

/**
 * Australian Business Numbers (ABR): eleven digits, the first two a check of the other nine (mod
 * 89). Written 2-3-3-3 as the register prints them they count anywhere; eleven bare digits only
 * after a cue (ABN, business number).
 */
const ABN_GROUPED = new RegExp(String.raw`${BEFORE}(\d{2} \d{3} \d{3} \d{3})${AFTER}`, 'g')
const ABN_BARE = new RegExp(String.raw`${BEFORE}(\d{11})${AFTER}`, 'g')
const ABN_CUE = cuePattern('abn|business number')
function findAbns(text: string, found: Span[]): void {
  scan(
    text,
    found,
    ABN_GROUPED,
    (written) => isAbn(digitsOf(written)).isValid && digitsOf(written) !== '00000000000',
  )
  scan(text, found, ABN_BARE, (written, start) => cuedBefore(text, start, ABN_CUE) && isAbn(written).isValid)
}

/**
 * Australian Medicare card numbers (Services Australia): ten digits, the first 2–6, the ninth the
 * check digit of the first eight (weights 1, 3, 7, 9, 1, 3, 7, 9, mod 10), the tenth the card's
 * issue number, and an eleventh, the person's number on the card, may follow. Written 4-5-1 as on
 * the card they count anywhere; bare digits only after a cue (Medicare).
 */
const MEDICARE_GROUPED = new RegExp(String.raw`${BEFORE}([2-6]\d{3} \d{5} \d(?:[ /-]?\d)?)${AFTER}`, 'g')
const MEDICARE_BARE = new RegExp(String.raw`${BEFORE}([2-6]\d{9,10})${AFTER}`, 'g')
const MEDICARE_CUE = cuePattern('medicare|medicare card')
const MEDICARE_WEIGHTS = [1, 3, 7, 9, 1, 3, 7, 9]
export function isMedicare(digits: string): boolean {
  if (digits.length !== 10 && digits.length !== 11) return false
  const first = digits.charCodeAt(0) - 48
  if (first < 2 || first > 6) return false
  let sum = 0
  for (let i = 0; i < 8; i++) sum += (digits.charCodeAt(i) - 48) * (MEDICARE_WEIGHTS[i] as number)
  return sum % 10 === digits.charCodeAt(8) - 48
}
function findMedicareNumbers(text: string, found: Span[]): void {
  scan(text, found, MEDICARE_GROUPED, (written) => isMedicare(digitsOf(written)))
  scan(
    text,
    found,
    MEDICARE_BARE,
    (written, start) => cuedBefore(text, start, MEDICARE_CUE) && isMedicare(written),
  )
}

export const IDENTITY_FINDERS = {
  us_itin: findItins,
  us_bank_routing: findRoutingNumbers,
  uk_nino: findNinos,
  uk_nhs: findNhsNumbers,
  es_nif: findNifs,
  es_nie: findNies,
  it_fiscal_code: findFiscalCodes,
  pl_pesel: findPesels,
  in_aadhaar: findAadhaars,
  in_pan: findPans,
  sg_nric: findNrics,
  au_tfn: findTfns,
  au_abn: findAbns,
  au_medicare: findMedicareNumbers,
} satisfies Record<string, Finder>
