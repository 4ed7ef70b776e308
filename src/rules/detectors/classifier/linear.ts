import { createHash } from 'node:crypto'
import type { Folded } from '../fold.js'
import {
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
 * score is calibrated (Platt scaling: p = σ(a · z + b), fitted on predictions for sources the
 * model was not trained on). Pure: it parses bytes it is given and reads nothing itself.
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

/** A text scored by every head of a model. */
export interface Scored {
  prepared: PreparedText
  /** Calibrated probability per head, in the model's head order. */
  probabilities: number[]
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

  /**
   * The words of the text that pushed one head's score up the most, merged into phrases of
   * neighbouring words: each word's own weight, half of each pair it is in, and the character
   * n-grams that start inside it. At most `limit` phrases, strongest first.
   */
  evidence(prepared: PreparedText, headName: string, limit = 3): Evidence[] {
    const h = this.headIndex.get(headName)
    if (h === undefined) return []
    const head = this.model.heads[h] as Head
    const { folded, tokens } = prepared
    if (tokens.length === 0) return []
    const mask = (1 << this.model.header.features.bits) - 1
    const weightOf = (hash: number) =>
      (head.weights[hash & mask] as number) * (hash & 0x80000000 ? -1 : 1) * head.scale
    const contributions = new Float64Array(tokens.length)
    tokens.forEach((token, t) => {
      let c = weightOf(wordHash(folded, token))
      if (t > 0) c += weightOf(pairHash(folded, tokens[t - 1] as Token, token)) / 2
      if (t + 1 < tokens.length) c += weightOf(pairHash(folded, token, tokens[t + 1] as Token)) / 2
      c += charWeight(folded, token, weightOf) / Math.max(1, token.end - token.start)
      contributions[t] = c
    })
    // Phrases: runs of neighbouring words whose contributions are all positive.
    const phrases: Evidence[] = []
    let t = 0
    while (t < tokens.length) {
      if ((contributions[t] as number) <= 0) {
        t++
        continue
      }
      let end = t
      let weight = 0
      while (end < tokens.length && (contributions[end] as number) > 0 && end - t < 4) {
        weight += contributions[end] as number
        end++
      }
      phrases.push({ start: (tokens[t] as Token).start, end: (tokens[end - 1] as Token).end, weight })
      t = end
    }
    phrases.sort((a, b) => b.weight - a.weight)
    return phrases.slice(0, limit)
  }
}

function charWeight(folded: string, token: Token, weightOf: (hash: number) => number): number {
  let sum = 0
  forEachCharGram(folded, token.start, token.end, (hash) => {
    sum += weightOf(hash)
  })
  return sum
}
