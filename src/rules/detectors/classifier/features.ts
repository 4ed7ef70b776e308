import { type Folded, fold } from '../fold.js'

/**
 * What the offline classifiers read of a text: hashed word and character n-grams of its folded
 * form, and of what it decodes to when it hides words in an encoding.
 *
 * - Folding, as for keywords (`../fold.ts`): Unicode NFKC, lower case, invisible format
 *   characters dropped, every run of whitespace one space. `ＩＧＮＯＲＥ` and `ig\u200Bnore` read
 *   as `ignore`.
 * - Words: runs of letters, digits and marks; each word and each pair of neighbours is a feature.
 * - Character n-grams of 3, 4 and 5 UTF-16 units over the folded text, spaces included: they
 *   carry misspellings, leetspeak, inflections and languages the word list never saw.
 * - Decoded views (`decodeViews`): base64 and hex runs that decode to text, rot13 when it reads
 *   as English better than the text itself, letters spelled out with separators (`i g n o r e`),
 *   and Braille. Their n-grams are added to the text's own, so an encoded "ignore previous
 *   instructions" weighs what the plain one does, and one marker feature per kind of encoding
 *   found tells the model that something was hidden.
 *
 * Every feature is hashed (FNV-1a, 32 bits) into `2^bits` buckets with a sign taken from the
 * hash's top bit; the vector holds log(1 + count) per bucket, scaled to unit length. Hashing
 * walks UTF-16 units without building substrings: about 3,000 n-grams per kilobyte.
 */

/** Feature extraction settings, stored with each model so training and inference agree. */
export interface FeatureConfig {
  /** log2 of the number of buckets. */
  bits: number
  /** Decode hidden encodings (prompt_injection); toxicity reads the text as written. */
  decode: boolean
  /**
   * Read quoted text apart: the n-grams of words inside quotation marks are features of their
   * own, so a phrase quoted to ask about it or to condemn it ("what does 'ignore previous
   * instructions' mean?") does not weigh what the phrase said outright does.
   */
  quotes?: boolean
}

/** A sparse feature vector: bucket indices (in the order first seen) and their values. */
export interface SparseVector {
  indices: Int32Array
  values: Float32Array
}

/** One token of the folded text, for attribution: where it lies in the folded text. */
export interface Token {
  start: number
  end: number
  /** Inside quotation marks (models read with `quotes`). */
  quoted?: true
}

const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193

// Seeds that keep the namespaces of the feature kinds apart.
const SEED_WORD = 0x9e3779b1
const SEED_PAIR = 0x85ebca6b
const SEED_CHAR = 0xc2b2ae35
const SEED_MARK = 0x27d4eb2f
const SEED_QUOTED_WORD = 0x165667b1
const SEED_QUOTED_PAIR = 0xd3a2646c
/** Mixed into the hash of a character n-gram that starts inside quotation marks. */
const QUOTED_CHAR = 0x5bd1e995

/** The folded text alone (see `fold`, which also keeps the way back to the original's offsets). */
export function foldText(text: string): string {
  return fold(text).text
}

const WORD = /[\p{L}\p{M}\p{N}]/u

/** Whether the character at `i` (a whole code point) is part of a word; its length in units. */
function wordAt(text: string, i: number): number {
  const code = text.charCodeAt(i)
  if (code < 0x80) {
    const word =
      (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a)
    return word ? 1 : 0
  }
  const point = text.codePointAt(i) as number
  const units = point > 0xffff ? 2 : 1
  return WORD.test(String.fromCodePoint(point)) ? units : -units
}

/** The word tokens of a folded text: runs of letters, marks and digits of any script. */
export function tokenize(folded: string): Token[] {
  const tokens: Token[] = []
  let start = -1
  let i = 0
  while (i < folded.length) {
    const at = wordAt(folded, i)
    if (at > 0) {
      if (start < 0) start = i
      i += at
    } else {
      if (start >= 0) {
        tokens.push({ start, end: i })
        start = -1
      }
      i += at === 0 ? 1 : -at
    }
  }
  if (start >= 0) tokens.push({ start, end: folded.length })
  return tokens
}

function hashRange(seed: number, text: string, start: number, end: number): number {
  let h = (FNV_OFFSET ^ seed) >>> 0
  for (let i = start; i < end; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, FNV_PRIME)
  }
  return h >>> 0
}

/**
 * Visits the hash of every character n-gram (3, 4 and 5 units) that starts in [from, to) of a
 * folded text (shared by extraction and attribution).
 */
export function forEachCharGram(
  folded: string,
  from: number,
  to: number,
  visit: (hash: number) => void,
  quoted: Uint8Array | null = null,
): void {
  const n = folded.length
  for (let i = from; i < to && i + 3 <= n; i++) {
    let h = (FNV_OFFSET ^ SEED_CHAR) >>> 0
    const salt = quoted !== null && quoted[i] === 1 ? QUOTED_CHAR : 0
    for (let k = 0; k < 5 && i + k < n; k++) {
      h ^= folded.charCodeAt(i + k)
      h = Math.imul(h, FNV_PRIME)
      if (k >= 2) visit((h ^ k ^ salt) >>> 0)
    }
  }
}

/** The hash of a word token (shared by extraction and attribution). */
export function wordHash(text: string, token: Token): number {
  return hashRange(token.quoted ? SEED_QUOTED_WORD : SEED_WORD, text, token.start, token.end)
}

/** The hash of a pair of neighbouring words (a quoted pair when either is quoted). */
export function pairHash(text: string, a: Token, b: Token): number {
  let h = hashRange(a.quoted || b.quoted ? SEED_QUOTED_PAIR : SEED_PAIR, text, a.start, a.end)
  h ^= 0x20
  h = Math.imul(h, FNV_PRIME)
  for (let i = b.start; i < b.end; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, FNV_PRIME)
  }
  return h >>> 0
}

/**
 * Accumulates hashed features into a dense scratch array, remembering which buckets it touched,
 * then emits them sparse. One per thread: reuse avoids allocating 2^bits floats per text.
 */
export class FeatureAccumulator {
  readonly mask: number
  /** Signed counts per bucket; valid where `stamp` equals the current generation. */
  private readonly counts: Int32Array
  private readonly stamp: Uint32Array
  private readonly touched: Int32Array
  private generation = 1
  private count = 0

  constructor(readonly bits: number) {
    this.mask = (1 << bits) - 1
    this.counts = new Int32Array(1 << bits)
    this.stamp = new Uint32Array(1 << bits)
    this.touched = new Int32Array(1 << bits)
  }

  /** Adds one occurrence of the feature with this hash. */
  add(hash: number): void {
    const bucket = hash & this.mask
    const sign = hash & 0x80000000 ? -1 : 1
    if (this.stamp[bucket] !== this.generation) {
      this.stamp[bucket] = this.generation
      this.counts[bucket] = sign
      this.touched[this.count++] = bucket
    } else this.counts[bucket] = (this.counts[bucket] as number) + sign
  }

  /** The character n-grams (3, 4, 5 units) and word features of a folded text. */
  addText(folded: string, tokens: readonly Token[], quoted: Uint8Array | null = null): void {
    this.addRange(folded, tokens, 0, tokens.length, quoted)
  }

  /**
   * The features of the part of a folded text that tokens [first, last) cover: their words, the
   * pairs among them, and the character n-grams that start from the first's start to the last's
   * end (the whole text when the range holds every token).
   */
  addRange(
    folded: string,
    tokens: readonly Token[],
    first: number,
    last: number,
    quoted: Uint8Array | null = null,
  ): void {
    const whole = first === 0 && last === tokens.length
    const from = whole ? 0 : (tokens[first] as Token).start
    const to = whole ? folded.length : (tokens[last - 1] as Token).end
    forEachCharGram(folded, from, to, (hash) => this.add(hash), quoted)
    let previous: Token | null = null
    for (let t = first; t < last; t++) {
      const token = tokens[t] as Token
      this.add(wordHash(folded, token))
      if (previous !== null) this.add(pairHash(folded, previous, token))
      previous = token
    }
  }

  /** Adds a named marker feature (for example that a base64 payload was decoded). */
  addMarker(name: string): void {
    this.add(hashRange(SEED_MARK, name, 0, name.length))
  }

  /** The accumulated vector: log(1 + |count|) with the count's sign, unit length; resets. */
  take(): SparseVector {
    const indices = this.touched.slice(0, this.count)
    const values = new Float32Array(indices.length)
    let norm = 0
    for (let j = 0; j < indices.length; j++) {
      const raw = this.counts[indices[j] as number] as number
      const magnitude = raw < 0 ? -raw : raw
      const value = magnitude < LOG1P.length ? (LOG1P[magnitude] as number) : Math.log1p(magnitude)
      values[j] = raw < 0 ? -value : value
      norm += value * value
    }
    this.count = 0
    // A new generation makes every bucket untouched again without clearing the arrays.
    this.generation = this.generation === 0xffffffff ? 1 : this.generation + 1
    if (this.generation === 1) this.stamp.fill(0)
    if (norm > 0) {
      const scale = 1 / Math.sqrt(norm)
      for (let j = 0; j < values.length; j++) values[j] = (values[j] as number) * scale
    }
    return { indices, values }
  }
}

/** log(1 + n) for the small counts nearly every feature has. */
const LOG1P = Float64Array.from({ length: 256 }, (_, n) => Math.log1p(n))

/** A text as the classifiers read it: its folded form, its tokens and its decoded views. */
export interface PreparedText {
  /** The folded text with its way back to the original's offsets. */
  source: Folded
  folded: string
  tokens: Token[]
  views: DecodedView[]
  /** 1 for each unit of the folded text inside quotation marks; null when none is (or not read). */
  quoted: Uint8Array | null
}

export interface DecodedView {
  kind: 'base64' | 'hex' | 'rot13' | 'spaced' | 'braille'
  folded: string
  tokens: Token[]
}

/**
 * Folds and tokenizes a text, and decodes its hidden views when `decode` is set. `folding`, when
 * given, is `fold(text)` already computed (rules reading the same text share it).
 */
export function prepareText(text: string, config: FeatureConfig, folding?: Folded): PreparedText {
  const source = folding ?? fold(text)
  const folded = source.text
  const tokens = tokenize(folded)
  const views = config.decode ? decodeViews(text, folded, tokens) : []
  const quoted = config.quotes ? markQuoted(folded, tokens) : null
  return { source, folded, tokens, views, quoted }
}

/** The feature vector of a prepared text. */
export function featurize(prepared: PreparedText, accumulator: FeatureAccumulator): SparseVector {
  accumulator.addText(prepared.folded, prepared.tokens, prepared.quoted)
  addViews(prepared, accumulator)
  return accumulator.take()
}

/** The decoded views' features, each behind a marker for its kind of encoding. */
export function addViews(prepared: PreparedText, accumulator: FeatureAccumulator): void {
  for (const view of prepared.views) {
    accumulator.addMarker(`decoded:${view.kind}`)
    accumulator.addText(view.folded, view.tokens)
  }
}

/** Quotation marks and the mark that closes each. */
const CLOSING: Readonly<Record<string, string>> = {
  '"': '"',
  '\u201c': '\u201d',
  '\u201e': '\u201c',
  '\u00ab': '\u00bb',
  '\u00bb': '\u00ab',
  '\u300c': '\u300d',
  '\u300e': '\u300f',
  '`': '`',
  "'": "'",
  '\u2018': '\u2019',
}
/** A quotation longer than this is not taken for one (an unclosed mark far from its partner). */
const MAX_QUOTE_UNITS = 400
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u

/**
 * Marks the units of a folded text that lie inside quotation marks, and the tokens there. A
 * quotation opens on a mark from `CLOSING` and ends on its partner within
 * `MAX_QUOTE_UNITS`; an apostrophe opens one only after a non-letter and closes one only before
 * a non-letter, so "don't" and "rock 'n' roll" stay prose. Null when nothing is quoted.
 */
export function markQuoted(folded: string, tokens: Token[]): Uint8Array | null {
  let marks: Uint8Array | null = null
  const n = folded.length
  let i = 0
  while (i < n) {
    const open = folded[i] as string
    const close = CLOSING[open]
    if (close === undefined) {
      i++
      continue
    }
    const apostrophe = open === "'" || open === '\u2018'
    if (apostrophe && i > 0 && LETTER_OR_DIGIT.test(folded[i - 1] as string)) {
      i++
      continue
    }
    let j = i + 1
    const limit = Math.min(n, i + 1 + MAX_QUOTE_UNITS)
    while (j < limit) {
      const c = folded[j] as string
      if (c === close && (!apostrophe || j + 1 >= n || !LETTER_OR_DIGIT.test(folded[j + 1] as string))) break
      j++
    }
    if (j >= limit || j === i + 1) {
      i++
      continue
    }
    marks ??= new Uint8Array(n)
    marks.fill(1, i + 1, j)
    i = j + 1
  }
  if (marks !== null) for (const token of tokens) if (marks[token.start] === 1) token.quoted = true
  return marks
}

// ---------------------------------------------------------------------------------------------
// Decoded views

/** Common English words: a decoded text that holds several of them is read as text. */
const COMMON = new Set(
  (
    'the be to of and a in that have i it for not on with he as you do at this but his by from they we say ' +
    'her she or an will my one all would there their what so up out if about who get which go me when make can ' +
    'like time no just him know take people into year your good some could them see other than then now look only ' +
    'come its over think also back after use two how our work first well way even new want because any these give ' +
    'day most us is are was were ignore previous instructions instruction prompt system say print tell write answer ' +
    'reveal password secret rules forget above following text please question task'
  ).split(' '),
)

function commonWords(folded: string, tokens: readonly Token[]): number {
  let count = 0
  for (const token of tokens) if (COMMON.has(folded.slice(token.start, token.end))) count++
  return count
}

const HEX_RUN = /\b(?:[0-9a-fA-F]{2}[ :]?){8,}/g
const SPACED_RUN = /(?:^|[^\p{L}\p{N}])((?:\p{L}[ ._\-*]{1,2}){3,}\p{L})(?![\p{L}\p{N}])/gu
const BRAILLE_RUN = /[\u2800-\u28ff]{3,}/g

/** At most this many decoded views per text, and this many code units in each. */
const MAX_VIEWS = 8
const MAX_VIEW_UNITS = 8192

function printableShare(text: string): number {
  if (text.length === 0) return 0
  let printable = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if ((c >= 0x20 && c < 0x7f) || c === 0x0a || c === 0x0d || c === 0x09 || c >= 0xa0) printable++
  }
  return printable / text.length
}

function view(kind: DecodedView['kind'], decoded: string): DecodedView | null {
  const folded = foldText(decoded.slice(0, MAX_VIEW_UNITS))
  if (folded.length < 4) return null
  const tokens = tokenize(folded)
  return { kind, folded, tokens }
}

function decodedText(bytes: Buffer): string | null {
  const text = bytes.toString('utf8')
  if (text.includes('\ufffd') || printableShare(text) < 0.9) return null
  // Text, not noise: at least one space-separated word of letters.
  return /\p{L}{2,}/u.test(text) ? text : null
}

/** Runs of 16 or more base64 characters (either alphabet), scanned by hand: a regex costs 5× more. */
function base64Runs(text: string): string[] {
  const runs: string[] = []
  let start = -1
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0
    const inRun =
      (c >= 0x41 && c <= 0x5a) ||
      (c >= 0x61 && c <= 0x7a) ||
      (c >= 0x30 && c <= 0x39) ||
      c === 0x2b ||
      c === 0x2f ||
      c === 0x2d ||
      c === 0x5f
    if (inRun) {
      if (start < 0) start = i
    } else if (start >= 0) {
      if (i - start >= 16) runs.push(text.slice(start, i))
      start = -1
    }
  }
  return runs
}

/** Common words in rot13: only a text that has some is worth decoding. */
const ROT13_CUES = /\b(?:gur|naq|lbh|lbhe|vf|bs|gb|guvf|jvgu|sbe|jung|vtaber|cerivbhf|vafgehpgvbaf|cebzcg)\b/

function rot13(text: string): string {
  return text.replace(/[a-zA-Z]/g, (c) => {
    const base = c <= 'Z' ? 65 : 97
    return String.fromCharCode(((c.charCodeAt(0) - base + 13) % 26) + base)
  })
}

/** Grade-1 Braille: the letters a–z (dots 1–6 as bits 0–5 of U+2800). */
const BRAILLE_LETTERS: Readonly<Record<number, string>> = {
  1: 'a',
  3: 'b',
  9: 'c',
  25: 'd',
  17: 'e',
  11: 'f',
  27: 'g',
  19: 'h',
  10: 'i',
  26: 'j',
  5: 'k',
  7: 'l',
  13: 'm',
  29: 'n',
  21: 'o',
  15: 'p',
  31: 'q',
  23: 'r',
  14: 's',
  30: 't',
  37: 'u',
  39: 'v',
  58: 'w',
  45: 'x',
  61: 'y',
  53: 'z',
}

function braille(run: string): string {
  let out = ''
  for (const ch of run) {
    const dots = (ch.codePointAt(0) as number) - 0x2800
    out += dots === 0 ? ' ' : (BRAILLE_LETTERS[dots] ?? '')
  }
  return out
}

/**
 * The texts hidden in a text: payloads in base64 or hex that decode to readable UTF-8, the
 * whole text in rot13 when that reads as English better than the text does, words spelled out
 * letter by letter, and Braille. Each is bounded in count and length.
 */
export function decodeViews(text: string, folded: string, tokens: readonly Token[]): DecodedView[] {
  const views: DecodedView[] = []
  const push = (v: DecodedView | null) => {
    if (v !== null && views.length < MAX_VIEWS) views.push(v)
  }
  if (text.length >= 16) {
    for (const run of base64Runs(text)) {
      if (views.length >= MAX_VIEWS) break
      // Words of one case are words, not base64.
      if (!/[a-z]/.test(run) || !/[A-Z0-9]/.test(run)) continue
      const decoded = decodedText(Buffer.from(run.replace(/-/g, '+').replace(/_/g, '/'), 'base64'))
      if (decoded !== null) push(view('base64', decoded))
    }
    HEX_RUN.lastIndex = 0
    for (let m = HEX_RUN.exec(text); m !== null && views.length < MAX_VIEWS; m = HEX_RUN.exec(text)) {
      const hex = m[0].replace(/[ :]/g, '')
      if (!/[a-fA-F]/.test(hex) || hex.length % 2 !== 0) continue
      const decoded = decodedText(Buffer.from(hex, 'hex'))
      if (decoded !== null) push(view('hex', decoded))
    }
  }
  if (ROT13_CUES.test(folded)) {
    const rotated = rot13(folded.slice(0, MAX_VIEW_UNITS))
    const rotatedTokens = tokenize(rotated)
    const gain = commonWords(rotated, rotatedTokens)
    if (gain >= 2 && gain > 2 * commonWords(folded, tokens))
      push({ kind: 'rot13', folded: rotated, tokens: rotatedTokens })
  }
  SPACED_RUN.lastIndex = 0
  let spaced = ''
  for (let m = SPACED_RUN.exec(folded); m !== null; m = SPACED_RUN.exec(folded)) {
    spaced += `${(m[1] as string).replace(/[ ._\-*]/g, '')} `
  }
  if (spaced.length >= 6) push(view('spaced', spaced))
  BRAILLE_RUN.lastIndex = 0
  let dots = ''
  for (let m = BRAILLE_RUN.exec(text); m !== null; m = BRAILLE_RUN.exec(text)) dots += `${braille(m[0])} `
  if (dots.length >= 6) push(view('braille', dots))
  return views
}
