import type { Span } from './api-keys.js'

/**
 * Dates of birth: a calendar date right after a cue that says it is one ("born", "DOB", "date of
 * birth", "birthday", geboren, né le, fecha de nacimiento, nato il, nascido em), with nothing but
 * punctuation and a few joining words between (on, is, was, the, am, le, el, il, em, de). A date
 * alone is just a date: no cue, no finding. The date is written with digits (12/03/1990,
 * 1990-03-12, 12.03.90) or with a month's name in English, German, French, Spanish, Italian or
 * Portuguese (12 March 1990, March 12th, 1990, 12. März 1990, 12 de marzo de 1990), and must exist
 * (no 31/02/1990); a numeric date counts when it exists read day first or month first. Years are
 * four digits from 1900 on or two digits; the finding is the date, not the cue.
 */
const CUE =
  /(?<![\p{L}\p{N}])(?:date of birth|birth ?date|birthday|born|d\.?o\.?b\.?|geboren|geburtsdatum|geburtstag|née?|date de naissance|fecha de nacimiento|nacid[oa]|data di nascita|nat[oa]|data de nascimento|nascid[oa])(?![\p{L}\p{N}])/giu

const MONTHS: Readonly<Record<string, number>> = {
  ...names([
    'january',
    'february',
    'march',
    'april',
    'may',
    'june',
    'july',
    'august',
    'september',
    'october',
    'november',
    'december',
  ]),
  ...names(['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']),
  sept: 9,
  ...names([
    'januar',
    'februar',
    'märz',
    'april',
    'mai',
    'juni',
    'juli',
    'august',
    'september',
    'oktober',
    'november',
    'dezember',
  ]),
  maerz: 3,
  ...names([
    'janvier',
    'février',
    'mars',
    'avril',
    'mai',
    'juin',
    'juillet',
    'août',
    'septembre',
    'octobre',
    'novembre',
    'décembre',
  ]),
  fevrier: 2,
  aout: 8,
  decembre: 12,
  ...names([
    'enero',
    'febrero',
    'marzo',
    'abril',
    'mayo',
    'junio',
    'julio',
    'agosto',
    'septiembre',
    'octubre',
    'noviembre',
    'diciembre',
  ]),
  setiembre: 9,
  ...names([
    'gennaio',
    'febbraio',
    'marzo',
    'aprile',
    'maggio',
    'giugno',
    'luglio',
    'agosto',
    'settembre',
    'ottobre',
    'novembre',
    'dicembre',
  ]),
  ...names([
    'janeiro',
    'fevereiro',
    'março',
    'abril',
    'maio',
    'junho',
    'julho',
    'agosto',
    'setembro',
    'outubro',
    'novembro',
    'dezembro',
  ]),
  marco: 3,
}
function names(list: string[]): Record<string, number> {
  return Object.fromEntries(list.map((name, i) => [name, i + 1]))
}
const MONTH = `(${Object.keys(MONTHS)
  .sort((a, b) => b.length - a.length)
  .join('|')})`
const ORDINAL = '(?:st|nd|rd|th|er|º|°)?'

/** What may stand between the cue and the date: punctuation and joining words, at most 30 units. */
const GAP = String.raw`(?:[^\p{L}\p{N}\n]{0,4}(?:on|is|was|in|the|am|le|el|il|em|de|den|at)(?![\p{L}\p{N}])){0,3}[^\p{L}\p{N}\n]{0,4}`
const END = String.raw`(?![\p{L}\p{N}]|[./-]\d)`
/**
 * The date after a cue, sticky at the cue's end: group 1 the whole date, then the forms'
 * groups: day/month/year (2–5), year-month-day (6–9), day month-name year (10–12), month-name day
 * year (13–15).
 */
const DATE_AFTER = new RegExp(
  `${GAP}(` +
    [
      String.raw`(\d{1,2})([./-])(\d{1,2})\3(\d{4}|\d{2})`,
      String.raw`(\d{4})([./-])(\d{1,2})\7(\d{1,2})`,
      String.raw`(\d{1,2})${ORDINAL}\.?(?: of| de)? ${MONTH}\.?,?(?: de| del)? (\d{4})`,
      String.raw`${MONTH}\.? (\d{1,2})${ORDINAL},? (\d{4})`,
    ].join('|') +
    `)${END}`,
  'iuy',
)

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate()
}
/** Whether day/month/year is a date (a two-digit year read as 19xx or 20xx, either way valid). */
function exists(day: number, month: number, year: number, twoDigitYear: boolean): boolean {
  if (month < 1 || month > 12 || day < 1) return false
  if (!twoDigitYear && (year < 1900 || year > 2100)) return false
  return day <= daysIn(twoDigitYear ? 2000 + year : year, month)
}

export function findBirthDates(text: string, found: Span[]): void {
  CUE.lastIndex = 0
  for (let m = CUE.exec(text); m !== null; m = CUE.exec(text)) {
    DATE_AFTER.lastIndex = m.index + m[0].length
    const d = DATE_AFTER.exec(text)
    if (d === null) continue
    const date = d[1] as string
    let valid = false
    if (d[2] !== undefined) {
      const a = Number(d[2])
      const b = Number(d[4])
      const year = Number(d[5])
      const short = (d[5] as string).length === 2
      valid = exists(a, b, year, short) || exists(b, a, year, short)
    } else if (d[6] !== undefined) valid = exists(Number(d[9]), Number(d[8]), Number(d[6]), false)
    else if (d[10] !== undefined)
      valid = exists(Number(d[10]), MONTHS[(d[11] as string).toLowerCase()] ?? 0, Number(d[12]), false)
    else valid = exists(Number(d[14]), MONTHS[(d[13] as string).toLowerCase()] ?? 0, Number(d[15]), false)
    if (!valid) continue
    const end = d.index + d[0].length
    found.push({ start: end - date.length, end })
    CUE.lastIndex = Math.max(CUE.lastIndex, end)
  }
}
