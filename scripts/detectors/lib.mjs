// Shared by the training pipeline (train.mjs) and the quality benchmark (bench/quality.mjs):
// reading labelled JSON Lines, featurizing, training logistic-regression heads, calibrating
// them, and the metrics they are judged by. Runs on the compiled code in dist/ (`npm run build`),
// so training and inference extract features with one implementation.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { FeatureAccumulator, featurize, prepareText } from '../../dist/rules/detectors/classifier/features.js'
import { documentWindows } from '../../dist/rules/detectors/classifier/linear.js'
import { originalEnd, originalStart } from '../../dist/rules/detectors/fold.js'
import { random } from './random.mjs'

/**
 * Reads `<dir>/<task>.jsonl` and any `<dir>/<task>.<name>.jsonl` beside it (for example the
 * templates' texts): one `{id, task, source, label, category, text, ...}` a line.
 */
export function readLabelled(dir, task) {
  const rows = []
  const files = readdirSync(dir)
    .filter((f) => f === `${task}.jsonl` || (f.startsWith(`${task}.`) && f.endsWith('.jsonl')))
    .sort()
  const text = files.map((f) => readFileSync(join(dir, f), 'utf8')).join('\n')
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    const row = JSON.parse(line)
    if (typeof row.text !== 'string' || (row.label !== 0 && row.label !== 1)) continue
    rows.push(row)
  }
  return rows
}

/** Feature vectors of every row, computed once. */
export function featurizeAll(rows, features) {
  const accumulator = new FeatureAccumulator(features.bits)
  return rows.map((row) => featurize(prepareText(row.text, features), accumulator))
}

const MAX_PLANT = 400

/**
 * Where each planted document row's plant lies, when the row does not say (`planted`): the part
 * where it differs from its clean twin, the label-0 document row from the same origin (path and
 * row), when that part is no longer than `MAX_PLANT` units. Other rows are left as they are.
 */
export function locatePlants(rows) {
  const key = (row) => `${row.source}\u0000${row.origin?.path}\u0000${row.origin?.row}`
  const clean = new Map()
  for (const row of rows) if (row.reading === 'document' && row.label === 0) clean.set(key(row), row.text)
  for (const row of rows) {
    if (row.reading !== 'document' || row.label !== 1 || row.planted) continue
    const twin = clean.get(key(row))
    if (twin === undefined) continue
    const text = row.text
    let start = 0
    while (start < twin.length && start < text.length && twin[start] === text[start]) start++
    let tail = 0
    while (
      tail < twin.length - start &&
      tail < text.length - start &&
      twin[twin.length - 1 - tail] === text[text.length - 1 - tail]
    )
      tail++
    // A difference longer than a planted instruction is not one: the twin is another text.
    if (text.length - tail > start && text.length - tail - start <= MAX_PLANT)
      row.planted = { start, end: text.length - tail }
  }
  return rows
}

/**
 * The windows a document row is read in (`Classifier.scoreDocument`), each with its feature
 * vector and its span in the row's text. A row's `planted` span ({start, end}, offsets in its
 * text), when it has one, labels each window: 1 when the window holds most of the planted text
 * (or the plant holds most of the window), 0 when they do not overlap, and null (not trained on)
 * in between. A planted row without a `planted` span is not trained on (every label null).
 */
export function documentExamples(row, features, accumulator) {
  const prepared = prepareText(row.text, features)
  const { folded, tokens, quoted, source } = prepared
  const plant = row.planted ?? null
  const examples = []
  for (const w of documentWindows(tokens)) {
    accumulator.addRange(folded, tokens, w.first, w.last, quoted)
    const vector = accumulator.take()
    const start = tokens.length === 0 ? 0 : originalStart(source, tokens[w.first].start)
    const end = tokens.length === 0 ? row.text.length : originalEnd(source, tokens[w.last - 1].end - 1)
    let label = row.label
    // A planted row whose plant is not known is scored, not trained on.
    if (row.label === 1 && plant === null) label = null
    else if (row.label === 1) {
      const overlap = Math.max(0, Math.min(end, plant.end) - Math.max(start, plant.start))
      const plantLength = Math.max(1, plant.end - plant.start)
      if (overlap === 0) label = 0
      else if (overlap >= Math.min(plantLength, end - start) / 2) label = 1
      else label = null
    }
    examples.push({ vector, label, start, end })
  }
  return examples
}

/**
 * Per-row training weights: each (source, label) group weighs in proportion to the square root
 * of its size, so a large source does not drown the others, and both labels carry half of the
 * total weight.
 */
export function balancedWeights(rows, label = (row) => row.label) {
  const groups = new Map()
  for (const row of rows) {
    const key = `${row.source}\u0000${label(row)}`
    groups.set(key, (groups.get(key) ?? 0) + 1)
  }
  const raw = rows.map((row) => {
    const n = groups.get(`${row.source}\u0000${label(row)}`)
    return Math.sqrt(n) / n
  })
  const total = [0, 0]
  rows.forEach((row, i) => {
    total[label(row)] += raw[i]
  })
  return raw.map((w, i) => (w * rows.length) / 2 / total[label(rows[i])])
}

/**
 * Logistic regression on sparse vectors: AdaGrad over shuffled examples, L2 decay applied
 * lazily, a fixed number of epochs. Returns float weights and bias.
 */
export function trainLogistic(vectors, labels, weights, options) {
  const { bits, epochs = 8, rate = 0.3, l2 = 1e-6, seed = 1 } = options
  const size = 1 << bits
  const w = new Float32Array(size)
  const g2 = new Float32Array(size).fill(1e-8)
  let bias = 0
  let biasG2 = 1e-8
  const order = vectors.map((_, i) => i)
  const rand = random(seed)
  for (let epoch = 0; epoch < epochs; epoch++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1))
      ;[order[i], order[j]] = [order[j], order[i]]
    }
    for (const i of order) {
      const { indices, values } = vectors[i]
      let z = bias
      for (let k = 0; k < indices.length; k++) z += w[indices[k]] * values[k]
      const p = 1 / (1 + Math.exp(-z))
      const grad = (p - labels[i]) * weights[i]
      for (let k = 0; k < indices.length; k++) {
        const f = indices[k]
        const g = grad * values[k] + l2 * w[f]
        g2[f] += g * g
        w[f] -= (rate * g) / Math.sqrt(g2[f])
      }
      biasG2 += grad * grad
      bias -= (rate * grad) / Math.sqrt(biasG2)
    }
  }
  return { weights: w, bias }
}

export function rawLogit(model, x) {
  let z = model.bias
  for (let k = 0; k < x.indices.length; k++) z += model.weights[x.indices[k]] * x.values[k]
  return z
}

/**
 * Platt scaling: fits p = σ(a·z + b) to labelled logits by weighted Newton steps, with Platt's
 * smoothed targets ((N+ + 1) / (N+ + 2) for positives, 1 / (N− + 2) for negatives, N the classes'
 * weights), which keep the fit finite when the logits separate the labels perfectly, and with
 * each step halved until the loss goes down.
 */
export function fitPlatt(logits, labels, weights) {
  let positives = 0
  let negatives = 0
  labels.forEach((y, i) => {
    if (y === 1) positives += weights[i]
    else negatives += weights[i]
  })
  const hi = (positives + 1) / (positives + 2)
  const lo = 1 / (negatives + 2)
  const [a, b] = fitLogistic(
    logits.map((z) => [z, 1]),
    labels.map((y) => (y === 1 ? hi : lo)),
    weights,
    0,
  )
  return { a, b }
}

/** Binary metrics at a threshold, and ROC-AUC (null when one class is absent). */
export function metrics(scores, labels, threshold = 0.5) {
  let tp = 0
  let fp = 0
  let tn = 0
  let fn = 0
  scores.forEach((s, i) => {
    const flagged = s > threshold
    if (labels[i] === 1) flagged ? tp++ : fn++
    else flagged ? fp++ : tn++
  })
  const precision = tp + fp > 0 ? tp / (tp + fp) : null
  const recall = tp + fn > 0 ? tp / (tp + fn) : null
  const f1 =
    precision !== null && recall !== null && precision + recall > 0
      ? (2 * precision * recall) / (precision + recall)
      : null
  const fpr = fp + tn > 0 ? fp / (fp + tn) : null
  return { n: scores.length, positives: tp + fn, precision, recall, f1, fpr, auc: auc(scores, labels) }
}

export function auc(scores, labels) {
  const pairs = scores.map((s, i) => [s, labels[i]]).sort((x, y) => x[0] - y[0])
  let positives = 0
  let negatives = 0
  for (const [, l] of pairs) l === 1 ? positives++ : negatives++
  if (positives === 0 || negatives === 0) return null
  // Mann–Whitney U with average ranks for ties.
  let rankSum = 0
  let i = 0
  while (i < pairs.length) {
    let j = i
    while (j + 1 < pairs.length && pairs[j + 1][0] === pairs[i][0]) j++
    const rank = (i + j + 2) / 2
    for (let k = i; k <= j; k++) if (pairs[k][1] === 1) rankSum += rank
    i = j + 1
  }
  return (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives)
}

/**
 * The recall at the threshold that flags `share` of `benign` (the scores of benign texts, which
 * may come from other rows than `scores`): the attacks of `scores` scoring above the
 * `floor(share × n)`-th highest benign score, ties not caught. Null without attacks or benign
 * scores.
 */
export function recallAt(scores, labels, benign, share) {
  const sorted = [...benign].sort((a, b) => b - a)
  if (sorted.length === 0 || !labels.includes(1)) return null
  const t = sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]
  let caught = 0
  let positives = 0
  labels.forEach((l, i) => {
    if (l === 1) {
      positives++
      if (scores[i] > t) caught++
    }
  })
  return caught / positives
}

/**
 * Weighted logistic regression on a few dense features (the last one a constant 1, not
 * penalised), an L2 penalty `l2` on the others: Newton's method, each step halved until the loss
 * falls, a step that does not lower it never taken. Labels may be soft (targets in [0, 1]).
 * Returns the weights.
 */
export function fitLogistic(features, labels, weights, l2 = 1) {
  const d = features[0]?.length ?? 0
  const penalty = (k) => (k === d - 1 ? 0 : l2)
  const loss = (w) => {
    let total = 0
    for (let k = 0; k < d; k++) total += (penalty(k) / 2) * w[k] * w[k]
    features.forEach((x, i) => {
      let z = 0
      for (let k = 0; k < d; k++) z += x[k] * w[k]
      // log(1 + e^z) − y·z, computed without overflow
      total += weights[i] * (Math.max(z, 0) + Math.log1p(Math.exp(-Math.abs(z))) - labels[i] * z)
    })
    return total
  }
  let w = new Array(d).fill(0)
  let current = loss(w)
  for (let iteration = 0; iteration < 100; iteration++) {
    const g = w.map((v, k) => penalty(k) * v)
    const h = w.map((_, i) => w.map((__, j) => (i === j ? penalty(i) + 1e-9 : 0)))
    features.forEach((x, i) => {
      let z = 0
      for (let k = 0; k < d; k++) z += x[k] * w[k]
      const p = 1 / (1 + Math.exp(-z))
      for (let a = 0; a < d; a++) {
        g[a] += weights[i] * (p - labels[i]) * x[a]
        for (let b = 0; b < d; b++) h[a][b] += weights[i] * p * (1 - p) * x[a] * x[b]
      }
    })
    const step = solve(h, g)
    let t = 1
    let next = w.map((v, k) => v - step[k])
    let nextLoss = loss(next)
    while (nextLoss > current && t > 1e-6) {
      t /= 2
      next = w.map((v, k) => v - t * step[k])
      nextLoss = loss(next)
    }
    if (nextLoss > current) break
    const gain = current - nextLoss
    w = next
    current = nextLoss
    if (gain < 1e-12 * Math.max(1, current)) break
  }
  return w
}

/** Solves a·x = b for a small dense system (Gauss–Jordan with partial pivoting). */
function solve(a, b) {
  const n = b.length
  const m = a.map((row, i) => [...row, b[i]])
  for (let c = 0; c < n; c++) {
    let p = c
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r][c]) > Math.abs(m[p][c])) p = r
    ;[m[c], m[p]] = [m[p], m[c]]
    for (let r = 0; r < n; r++) {
      if (r === c) continue
      const f = m[r][c] / m[c][c]
      for (let k = c; k <= n; k++) m[r][k] -= f * m[c][k]
    }
  }
  return m.map((row, i) => row[n] / row[i])
}

const pct = (x) => (x === null ? '—' : `${(x * 100).toFixed(1)}%`)
const dec = (x) => (x === null ? '—' : x.toFixed(3))

/** One Markdown table row of metrics. */
export function metricsRow(label, m) {
  return `| ${label} | ${m.n} | ${m.positives} | ${pct(m.precision)} | ${pct(m.recall)} | ${pct(m.f1)} | ${pct(m.fpr)} | ${dec(m.auc)} |`
}

export const METRICS_HEADER =
  '| task / source | n | + | precision | recall | F1 | FPR | ROC-AUC |\n|---|---:|---:|---:|---:|---:|---:|---:|'

/** Command-line flags: `--name value` pairs. */
export function flags(argv) {
  const out = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (!arg.startsWith('--')) continue
    const next = argv[i + 1]
    if (next === undefined || next.startsWith('--')) out[arg.slice(2)] = true
    else {
      out[arg.slice(2)] = next
      i++
    }
  }
  return out
}

export { random }
