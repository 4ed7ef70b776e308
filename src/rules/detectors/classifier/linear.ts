import { createHash } from 'node:crypto'
import type { Folded } from '../fold.js'
import {
  addViews,
  FeatureAccumulator,
  type FeatureConfig,
  featurize,
  forEachCharGram,
  type PreparedText,
  pairHash,
  prepareText,
  type SparseVector,
  type Token,
  wordHash,
} from './features.js'

/**
 * A linear classifier over hashed n-grams (`features.ts`): one or more heads, each a logistic
 * regression whose weights are stored as 8-bit integers with one scale per head, and whose raw
 * score is calibrated (Platt scaling: p = σ(a · z + b), fitted on out-of-fold predictions for
 * rows the model was not trained on, folds stratified by source: calibrated in source; what the
 * default threshold means on sources never seen is in models/README.md). Pure: it parses bytes
 * it is given and reads nothing itself.
 *
 * File layout (version 2), little-endian:
 *
 *     "WDNM"  u16 version  u32 header length  header (JSON, UTF-8)  weights  SHA-256
 *
 * The header names the task, the feature settings and each head (name, bias, scale,
 * calibration). The weights section holds, head after head, 2^bits signed bytes. The last 32
 * bytes are the SHA-256 of everything before them, which `parseModel` checks before it reads
 * anything else: every byte that decides a score (the calibration and biases in the header as
 * much as the weights) is covered, so a damaged or edited file never loads.
 */

export const MODEL_MAGIC = 'WDNM'
export const MODEL_VERSION = 2

/** Bytes of the SHA-256 that ends the file. */
const DIGEST_BYTES = 32

export interface HeadHeader {
  name: string
  bias: number
  /** Weight = stored byte × scale. */
  scale: number
  /** Platt scaling of the raw logit: p = σ(a · z + b). */
  calibration: { a: number; b: number }
}

export interface ModelHeader {
  format: 'warden-linear'
  task: string
  features: FeatureConfig
  heads: HeadHeader[]
  /** How the model was made: data sources, seed, command (for the model card). */
  training?: Record<string, unknown>
}

export interface Head extends HeadHeader {
  weights: Int8Array
}

export interface LinearModel {
  header: ModelHeader
  heads: Head[]
}

export class ModelFormatError extends Error {}

/** Reads a model file's bytes, checking its magic, version and checksum. */
export function parseModel(bytes: Uint8Array): LinearModel {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (buffer.length < 10 + DIGEST_BYTES || buffer.toString('latin1', 0, 4) !== MODEL_MAGIC)
    throw new ModelFormatError('not a Warden model file')
  const version = buffer.readUInt16LE(4)
  if (version !== MODEL_VERSION) throw new ModelFormatError(`unsupported model format version ${version}`)
  const body = buffer.subarray(0, buffer.length - DIGEST_BYTES)
  const digest = createHash('sha256').update(body).digest()
  if (!digest.equals(buffer.subarray(body.length)))
    throw new ModelFormatError('model checksum mismatch: the file is damaged')
  const headerLength = body.readUInt32LE(6)
  const headerEnd = 10 + headerLength
  if (headerEnd > body.length) throw new ModelFormatError('truncated model header')
  const header = JSON.parse(body.toString('utf8', 10, headerEnd)) as ModelHeader
  const size = 1 << header.features.bits
  const weights = body.subarray(headerEnd)
  if (weights.length !== size * header.heads.length)
    throw new ModelFormatError(
      `weights section of ${weights.length} bytes, expected ${size * header.heads.length}`,
    )
  const heads = header.heads.map((head, h) => ({
    ...head,
    weights: new Int8Array(weights.buffer, weights.byteOffset + h * size, size),
  }))
  return { header, heads }
}

/** Writes a model: float weights per head are quantised to 8 bits with one scale per head. */
export function serializeModel(
  header: Omit<ModelHeader, 'heads' | 'format'>,
  heads: { name: string; bias: number; weights: Float32Array; calibration: { a: number; b: number } }[],
): Uint8Array {
  const size = 1 << header.features.bits
  const section = new Int8Array(size * heads.length)
  const headers: HeadHeader[] = []
  heads.forEach((head, h) => {
    let max = 0
    for (const w of head.weights) max = Math.max(max, Math.abs(w))
    const scale = max > 0 ? max / 127 : 1
    for (let i = 0; i < size; i++) section[h * size + i] = Math.round((head.weights[i] as number) / scale)
    headers.push({ name: head.name, bias: head.bias, scale, calibration: head.calibration })
  })
  const weightBytes = Buffer.from(section.buffer)
  const full: ModelHeader = { format: 'warden-linear', ...header, heads: headers }
  const json = Buffer.from(JSON.stringify(full), 'utf8')
  const prefix = Buffer.alloc(10)
  prefix.write(MODEL_MAGIC, 0, 'latin1')
  prefix.writeUInt16LE(MODEL_VERSION, 4)
  prefix.writeUInt32LE(json.length, 6)
  const body = Buffer.concat([prefix, json, weightBytes])
  return Buffer.concat([body, createHash('sha256').update(body).digest()])
}

export function sigmoid(z: number): number {
  return 1 / (1 + Math.exp(-z))
}

/** The raw logit of one head for a feature vector. */
export function logit(head: Head, x: SparseVector): number {
  let z = 0
  const { indices, values } = x
  const w = head.weights
  for (let j = 0; j < indices.length; j++) z += (w[indices[j] as number] as number) * (values[j] as number)
  return z * head.scale + head.bias
}

/** A calibrated probability from a raw logit. */
export function calibrated(head: HeadHeader, z: number): number {
  return sigmoid(head.calibration.a * z + head.calibration.b)
}

/** What weighed most in a verdict: a span of the folded text and its share of the logit. */
export interface Evidence {
  /** Offsets in the folded text. */
  start: number
  end: number
  weight: number
}

/** A text scored by every head of a model, or a document by its document head. */
export interface Scored {
  prepared: PreparedText
  /** Calibrated probability per head, in the model's head order; a document's: its head's only. */
  probabilities: number[]
  /** A document's window that scored highest: its tokens [first, last) (null: the decoded views). */
  range?: { first: number; last: number } | null
}

/** The head that reads documents, where a model has one (prompt_injection). */
export const DOCUMENT_HEAD = 'injection_document'

/** A document is read in windows of about this many units of folded text, each half over the next. */
export const DOCUMENT_WINDOW = 200

/**
 * The windows a document is read in: runs of whole tokens spanning at most `width` units of the
 * folded text (a single longer token is a window of its own), each starting about half a window
 * after the one before, the last ending at the last token. One window for a short text.
 */
export function documentWindows(
  tokens: readonly Token[],
  width = DOCUMENT_WINDOW,
): Array<{ first: number; last: number }> {
  const windows: Array<{ first: number; last: number }> = []
  let first = 0
  while (first < tokens.length) {
    const from = (tokens[first] as Token).start
    let last = first + 1
    while (last < tokens.length && (tokens[last] as Token).end - from <= width) last++
    windows.push({ first, last })
    if (last >= tokens.length) break
    let next = first + 1
    while (next < last && (tokens[next] as Token).start - from < width / 2) next++
    first = next
  }
  if (windows.length === 0) windows.push({ first: 0, last: 0 })
  return windows
}

/** A model ready to score texts: owns one feature accumulator (not shared across threads). */
export class Classifier {
  private readonly accumulator: FeatureAccumulator
  readonly headIndex: ReadonlyMap<string, number>

  constructor(readonly model: LinearModel) {
    this.accumulator = new FeatureAccumulator(model.header.features.bits)
    this.headIndex = new Map(model.heads.map((h, i) => [h.name, i]))
  }

  get task(): string {
    return this.model.header.task
  }

  /** Scores a text; `folding` is `fold(text)` when the caller has it already. */
  score(text: string, folding?: Folded): Scored {
    const prepared = prepareText(text, this.model.header.features, folding)
    const x = featurize(prepared, this.accumulator)
    return { prepared, probabilities: this.model.heads.map((head) => calibrated(head, logit(head, x))) }
  }

  /** Whether the model has a head that reads documents. */
  get readsDocuments(): boolean {
    return this.headIndex.has(DOCUMENT_HEAD)
  }

  /**
   * Scores a document (retrieved content, a tool's result) by its document head: each window
   * (`documentWindows`) is scored on its own and the document scores what its worst window
   * does, so an instruction planted in a long passage is not diluted by the passage around it.
   * The decoded views are scored as one more window. A model without a document head scores
   * the document as a message.
   */
  scoreDocument(text: string, folding?: Folded): Scored {
    const h = this.headIndex.get(DOCUMENT_HEAD)
    if (h === undefined) return this.score(text, folding)
    const head = this.model.heads[h] as Head
    const prepared = prepareText(text, this.model.header.features, folding)
    const { folded, tokens, quoted } = prepared
    let best = -Infinity
    let range: Scored['range'] = null
    for (const window of documentWindows(tokens)) {
      this.accumulator.addRange(folded, tokens, window.first, window.last, quoted)
      const z = logit(head, this.accumulator.take())
      if (z > best) {
        best = z
        range = window
      }
    }
    if (prepared.views.length > 0) {
      addViews(prepared, this.accumulator)
      const z = logit(head, this.accumulator.take())
      if (z > best) {
        best = z
        range = null
      }
    }
    return { prepared, probabilities: [calibrated(head, best)], range }
  }

  /**
   * The words of the text that pushed one head's score up the most, merged into phrases of
   * neighbouring words: each word's own weight, half of each pair it is in, and the character
   * n-grams that start inside it. At most `limit` phrases, strongest first.
   */
  evidence(
    prepared: PreparedText,
    headName: string,
    limit = 3,
    range: { first: number; last: number } = { first: 0, last: prepared.tokens.length },
  ): Evidence[] {
    const h = this.headIndex.get(headName)
    if (h === undefined) return []
    const head = this.model.heads[h] as Head
    const { folded, quoted } = prepared
    const tokens = prepared.tokens.slice(range.first, range.last)
    if (tokens.length === 0) return []
    const mask = (1 << this.model.header.features.bits) - 1
    const weightOf = (hash: number) =>
      (head.weights[hash & mask] as number) * (hash & 0x80000000 ? -1 : 1) * head.scale
    const contributions = new Float64Array(tokens.length)
    tokens.forEach((token, t) => {
      let c = weightOf(wordHash(folded, token))
      if (t > 0) c += weightOf(pairHash(folded, tokens[t - 1] as Token, token)) / 2
      if (t + 1 < tokens.length) c += weightOf(pairHash(folded, token, tokens[t + 1] as Token)) / 2
      c += charWeight(folded, token, weightOf, quoted) / Math.max(1, token.end - token.start)
      contributions[t] = c
    })
    // Phrases: runs of neighbouring words whose contributions are all positive, up to four
    // words; a phrase of function words alone ("you", "of the") names no reason and is left out.
    const phrases: Evidence[] = []
    let t = 0
    while (t < tokens.length) {
      if ((contributions[t] as number) <= 0) {
        t++
        continue
      }
      let end = t
      let weight = 0
      let content = false
      while (end < tokens.length && (contributions[end] as number) > 0 && end - t < 4) {
        const token = tokens[end] as Token
        weight += contributions[end] as number
        if (!FUNCTION_WORDS.has(folded.slice(token.start, token.end))) content = true
        end++
      }
      if (content)
        phrases.push({ start: (tokens[t] as Token).start, end: (tokens[end - 1] as Token).end, weight })
      t = end
    }
    phrases.sort((a, b) => b.weight - a.weight)
    return phrases.slice(0, limit)
  }
}

function charWeight(
  folded: string,
  token: Token,
  weightOf: (hash: number) => number,
  quoted: Uint8Array | null,
): number {
  let sum = 0
  forEachCharGram(
    folded,
    token.start,
    token.end,
    (hash) => {
      sum += weightOf(hash)
    },
    quoted,
  )
  return sum
}

/**
 * Words that carry grammar, not a reason: pronouns, articles, auxiliaries, prepositions and
 * conjunctions (English, German, French, Spanish, the languages the models read most).
 */
const FUNCTION_WORDS = new Set(
  (
    'i me my mine myself you your yours yourself yourselves he him his she her hers it its we us our ours ' +
    'they them their theirs this that these those a an the and or but nor so yet if then than as of at by ' +
    'for from in into on onto to with without about over under up down out off is am are was were be been ' +
    'being do does did done have has had having will would shall should can could may might must not no ' +
    'there here what which who whom whose when where why how all any some each every just very too also ' +
    "i'm you're it's don't ich du er sie es wir ihr der die das ein eine und oder aber zu mit von in auf " +
    'ist sind je tu il elle nous vous ils le la les un une et ou de du des en est yo tú él ella el los las ' +
    'y o que es'
  ).split(' '),
)
