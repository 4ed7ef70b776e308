/**
 * Folding for phrase matching: Unicode NFKC, lower case, a few full case foldings that
 * `toLowerCase` leaves out (ß → ss, final sigma → σ), typographic apostrophes → ', runs of
 * whitespace → one space, and invisible format characters (zero-width space and joiners, soft
 * hyphen, BOM) dropped so that `ig\u200Bnore` reads as `ignore`.
 *
 * Every UTF-16 unit of the folded text remembers the span of the original it came from, so a
 * match in the folded text maps back to exact offsets in the original even when
 * folding changed lengths (ﬁ → fi, full-width letters, e + combining acute → é, dropped
 * characters).
 *
 * Each base character is normalised together with the combining marks that follow it (and
 * Hangul jamo vowels/finals with their initial), which is what NFKC composes; normalising piece
 * by piece differs from normalising the whole string only for scripts where two base characters
 * compose, which phrase matching does not need. Runs of ASCII, the common case, map one to one
 * without normalising: a keywords rule costs ~0.05 ms on 1 KB and 3–7 ms on 100 KB, folding
 * included (bench/detectors.mjs).
 *
 * `nfkc` is the same walk with NFKC alone (no case folding, whitespace and invisible characters
 * kept): what the pii rule reads. Text NFKC leaves alone, all ASCII text among it, is not walked.
 */
import type { TargetText } from '../types.js'
import { isAscii } from './code-points.js'

export interface Folded {
  /** The folded text. */
  text: string
  /**
   * For each UTF-16 unit of `text`: the UTF-16 offset in the original where its piece starts.
   * Absent (as `end`) when each unit stands for the original's unit at the same offset.
   */
  start?: Int32Array
  /** For each UTF-16 unit of `text`: the UTF-16 offset in the original where its piece ends. */
  end?: Int32Array
  /** For ASCII text: its whitespace runs of two units or more, each folded to one space. */
  runs?: SpaceRuns
}

/** Whitespace runs of an ASCII text: run k is the space at folded offset `at[k]`, from the original's [from[k], to[k]). */
interface SpaceRuns {
  at: Int32Array
  from: Int32Array
  to: Int32Array
}

function foldAscii(text: string): Folded {
  const lowered = text.toLowerCase()
  const folded = lowered.replace(TO_SPACE, ' ')
  if (folded.length === text.length) return { text: folded }
  const at: number[] = []
  const from: number[] = []
  const to: number[] = []
  let removed = 0
  SPACE_RUN.lastIndex = 0
  for (let m = SPACE_RUN.exec(text); m !== null; m = SPACE_RUN.exec(text)) {
    at.push(m.index - removed)
    from.push(m.index)
    to.push(m.index + m[0].length)
    removed += m[0].length - 1
  }
  return {
    text: folded,
    runs: { at: Int32Array.from(at), from: Int32Array.from(from), to: Int32Array.from(to) },
  }
}

/** The last run at or before folded offset `i`, or -1. */
function runAt(runs: SpaceRuns, i: number): number {
  let lo = 0
  let hi = runs.at.length - 1
  let found = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if ((runs.at[mid] as number) <= i) {
      found = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return found
}

const COMBINING = /[\p{M}\u1160-\u11ff]/u
const INVISIBLE = /^[\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff]+$/
const SPACE = /^\s+$/u
const SPECIAL = /[ßςẞ\u2018\u2019\u02bc]/
const SPECIALS = /[ßςẞ\u2018\u2019\u02bc]/g
const SPECIAL_MAP: Record<string, string> = {
  ß: 'ss',
  ẞ: 'ss',
  ς: 'σ',
  '\u2018': "'",
  '\u2019': "'",
  '\u02bc': "'",
}

function foldPiece(piece: string): string {
  const lowered = piece.normalize('NFKC').toLowerCase()
  return SPECIAL.test(lowered) ? lowered.replace(SPECIALS, (c) => SPECIAL_MAP[c] ?? c) : lowered
}

function isAsciiSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13)
}

/** ASCII whitespace runs of two or more. */
const SPACE_RUN = /[ \t\n\v\f\r]{2,}/g
/** What folds to a space: other whitespace, and runs (single spaces stay, unreplaced, which is 7× faster). */
const TO_SPACE = /[\t\n\v\f\r][ \t\n\v\f\r]*| [ \t\n\v\f\r]+/g

/**
 * Folds `text` for matching, keeping the way back to the original's offsets. ASCII text, the
 * common case, folds to its lower case with each whitespace run made one space, natively, and
 * keeps only where its runs of two or more were (`runs`) instead of two offsets a unit: about a
 * tenth of the general path's cost.
 */
export function fold(text: string): Folded {
  if (isAscii(text)) return foldAscii(text)
  return foldPieces(text, true)
}

/**
 * `text` in Unicode NFKC, and nothing else: no case folding, whitespace kept as it is, nothing
 * dropped (NFKC never drops a character), with the way back to the original's offsets. What the
 * pii rule reads: full-width digits (４１１１) are digits, a full-width ＠ is an @, a no-break space
 * a space. Text NFKC leaves as it is (all ASCII text, most other text) is returned as it is, with
 * no offsets to map (`start` absent).
 */
export function nfkc(text: string): Folded {
  if (isAscii(text) || text.normalize('NFKC') === text) return { text }
  return foldPieces(text, false)
}

/** The text `nfkc` read last, and its answer: a streamed reply's check reads one text twice. */
let lastNfkc: { text: string; folded: Folded } = { text: '', folded: { text: '' } }

/** `nfkc(text)`, remembered for the last text asked (compared by value). */
export function nfkcOnce(text: string): Folded {
  if (lastNfkc.text !== text) lastNfkc = { text, folded: nfkc(text) }
  return lastNfkc.folded
}

/**
 * The general path of `fold` (`caseFold`) and `nfkc`: each base character with the combining
 * marks after it, normalised on its own; runs of ASCII map one to one.
 */
function foldPieces(text: string, caseFold: boolean): Folded {
  const n = text.length
  const parts: string[] = []
  let start = new Int32Array(n + 8)
  let end = new Int32Array(n + 8)
  let size = 0
  let lastSpace = false
  const reserve = (extra: number) => {
    if (size + extra <= start.length) return
    const grownStart = new Int32Array((size + extra) * 2)
    const grownEnd = new Int32Array((size + extra) * 2)
    grownStart.set(start)
    grownEnd.set(end)
    start = grownStart
    end = grownEnd
  }
  const space = (from: number, to: number) => {
    if (lastSpace) {
      end[size - 1] = to
      return
    }
    reserve(1)
    start[size] = from
    end[size] = to
    size++
    parts.push(' ')
    lastSpace = true
  }

  let i = 0
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c < 0x80) {
      if (caseFold && isAsciiSpace(c)) {
        space(i, i + 1)
        i++
        continue
      }
      // A run of ASCII characters (non-space ones when folding) maps one to one; its last
      // character stays out of the run when a non-ASCII character (perhaps a combining mark)
      // follows it.
      let j = i + 1
      while (j < n) {
        const d = text.charCodeAt(j)
        if (d >= 0x80 || (caseFold && isAsciiSpace(d))) break
        j++
      }
      if (j < n && text.charCodeAt(j) >= 0x80) j--
      if (j > i) {
        reserve(j - i)
        for (let k = i; k < j; k++) {
          start[size] = k
          end[size] = k + 1
          size++
        }
        parts.push(caseFold ? text.slice(i, j).toLowerCase() : text.slice(i, j))
        lastSpace = false
        i = j
        continue
      }
    }
    // One base code point and the combining marks after it.
    const from = i
    let j = i
    do {
      j += (text.codePointAt(j) as number) > 0xffff ? 2 : 1
    } while (j < n && COMBINING.test(String.fromCodePoint(text.codePointAt(j) as number)))
    const piece = text.slice(i, j)
    i = j
    if (caseFold && INVISIBLE.test(piece)) continue
    const folded = caseFold ? foldPiece(piece) : piece.normalize('NFKC')
    if (caseFold && SPACE.test(folded)) {
      space(from, j)
    } else if (folded.length > 0) {
      reserve(folded.length)
      for (let k = 0; k < folded.length; k++) {
        start[size] = from
        end[size] = j
        size++
      }
      parts.push(folded)
      lastSpace = false
    }
  }
  return { text: parts.join(''), start: start.subarray(0, size), end: end.subarray(0, size) }
}

/** The UTF-16 offset in the original where unit `i` of the folded text starts. */
export function originalStart(folded: Folded, i: number): number {
  if (folded.start !== undefined) return folded.start[i] as number
  const runs = folded.runs
  if (runs === undefined) return i
  const k = runAt(runs, i)
  if (k < 0) return i
  const at = runs.at[k] as number
  return at === i ? (runs.from[k] as number) : (runs.to[k] as number) + (i - at - 1)
}

/** The UTF-16 offset in the original where unit `i` of the folded text ends. */
export function originalEnd(folded: Folded, i: number): number {
  if (folded.end !== undefined) return folded.end[i] as number
  const runs = folded.runs
  const k = runs === undefined ? -1 : runAt(runs, i)
  return runs !== undefined && k >= 0 && runs.at[k] === i
    ? (runs.to[k] as number)
    : originalStart(folded, i) + 1
}

/** Each text of an evaluation folded once, with the string it was folded from. */
const foldedTexts = new WeakMap<TargetText, { text: string; folded: Folded }>()

/**
 * `fold(target.text)`, computed once per text of an evaluation: every keywords rule and
 * heuristic that reads the same text shares it (folding is ~70% of a keywords rule's cost).
 */
export function foldTarget(target: TargetText): Folded {
  const cached = foldedTexts.get(target)
  if (cached !== undefined && cached.text === target.text) return cached.folded
  const folded = fold(target.text)
  foldedTexts.set(target, { text: target.text, folded })
  return folded
}

/** Each text of an evaluation in NFKC, with the string it was normalised from. */
const nfkcTexts = new WeakMap<TargetText, { text: string; folded: Folded }>()

/** `nfkc(target.text)`, computed once per text of an evaluation: every pii rule reading it shares it. */
export function nfkcTarget(target: TargetText): Folded {
  const cached = nfkcTexts.get(target)
  if (cached !== undefined && cached.text === target.text) return cached.folded
  const folded = nfkcOnce(target.text)
  nfkcTexts.set(target, { text: target.text, folded })
  return folded
}

/** A phrase folded the way texts are, without leading or trailing space. */
export function foldPhrase(phrase: string): string {
  return fold(phrase).text.trim()
}

const WORD = /[\p{L}\p{N}\p{M}]/u

/** Whether the code point at UTF-16 offset `i` of `s` is a word character (letter, number, mark). */
export function isWordAt(s: string, i: number): boolean {
  if (i < 0 || i >= s.length) return false
  const c = s.charCodeAt(i)
  if (c < 0x80) return (c >= 48 && c <= 57) || (c >= 97 && c <= 122) || (c >= 65 && c <= 90)
  return WORD.test(String.fromCodePoint(s.codePointAt(i) as number))
}

/** Whether the code point ending just before UTF-16 offset `i` of `s` is a word character. */
export function isWordBefore(s: string, i: number): boolean {
  if (i <= 0) return false
  const c = s.charCodeAt(i - 1)
  if (c >= 0xdc00 && c <= 0xdfff && i >= 2) return isWordAt(s, i - 2)
  return isWordAt(s, i - 1)
}
