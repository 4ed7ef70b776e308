// Trains Warden's offline classifiers (prompt_injection, toxicity) from labelled JSON Lines and
// writes their weights to models/. Deterministic for a given data set and seed.
//
//   npm run train:detectors -- --data DIR [--task prompt_injection|toxicity] [--seed 1]
//                              [--eval ../shared/datasets/detectors] [--cv [--holdout a,b]] [--out models]
//
// DIR holds <task>.jsonl files, one `{id, task, source, label, category, text, origin}` a line
// (the format of the development set). With --cv it writes nothing and instead reports
// cross-validation by source: for each source, a model trained on every other source is
// measured on it (on the training data's rows of that source and the --eval set's).
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { serializeModel } from '../../dist/rules/detectors/classifier/linear.js'
import {
  balancedWeights,
  featurizeAll,
  fitPlatt,
  flags,
  METRICS_HEADER,
  metrics,
  metricsRow,
  random,
  rawLogit,
  readLabelled,
  trainLogistic,
} from './lib.mjs'
import { TASKS } from './tasks.mjs'

const args = flags(process.argv.slice(2))
if (typeof args.data !== 'string') {
  console.error('usage: train.mjs --data DIR [--task NAME] [--seed N] [--eval DIR] [--cv] [--out DIR]')
  process.exit(2)
}
const seed = Number(args.seed ?? 1)
const out = typeof args.out === 'string' ? args.out : 'models'
const tasks = typeof args.task === 'string' ? [args.task] : Object.keys(TASKS)

/** Trains every head of a task on some rows; returns float models per head. */
function trainHeads(spec, rows, vectors) {
  return spec.heads.map((head) => {
    const picked = []
    rows.forEach((row, i) => {
      const y = head.label(row)
      if (y === 0 || y === 1) picked.push([i, y])
    })
    const pickedRows = picked.map(([i, y]) => ({ ...rows[i], label: y }))
    const weights = balancedWeights(pickedRows)
    const model = trainLogistic(
      picked.map(([i]) => vectors[i]),
      picked.map(([, y]) => y),
      weights,
      { ...spec.training, bits: spec.features.bits, seed },
    )
    return { head, model }
  })
}

/**
 * Out-of-fold logits for calibration: the rows are split into `k` folds at random (seeded,
 * stratified by source and label), and each fold is scored by heads trained on the others.
 */
function outOfFoldLogits(spec, rows, vectors) {
  const k = spec.calibrationFolds ?? 5
  const rand = random(seed + 7)
  const fold = new Int32Array(rows.length)
  const groups = new Map()
  rows.forEach((row, i) => {
    const key = `${row.source}\u0000${row.label}`
    const list = groups.get(key) ?? []
    list.push(i)
    groups.set(key, list)
  })
  for (const [, list] of [...groups].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    for (let i = list.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1))
      ;[list[i], list[j]] = [list[j], list[i]]
    }
    list.forEach((row, position) => {
      fold[row] = position % k
    })
  }
  const logits = spec.heads.map(() => new Float64Array(rows.length).fill(Number.NaN))
  for (let f = 0; f < k; f++) {
    const trainIdx = []
    rows.forEach((_, i) => {
      if (fold[i] !== f) trainIdx.push(i)
    })
    const heads = trainHeads(
      spec,
      trainIdx.map((i) => rows[i]),
      trainIdx.map((i) => vectors[i]),
    )
    rows.forEach((_, i) => {
      if (fold[i] !== f) return
      heads.forEach(({ model }, h) => {
        logits[h][i] = rawLogit(model, vectors[i])
      })
    })
  }
  return logits
}

function calibrate(spec, rows, logits) {
  return spec.heads.map((head, h) => {
    const z = []
    const y = []
    const picked = []
    rows.forEach((row, i) => {
      const label = head.label(row)
      if ((label === 0 || label === 1) && !Number.isNaN(logits[h][i])) {
        z.push(logits[h][i])
        y.push(label)
        picked.push({ ...row, label })
      }
    })
    // Both labels weigh the same, then negatives `negativeWeight` times more: the prior the
    // probabilities are calibrated for.
    const weights = balancedWeights(picked).map((w, i) => w * (y[i] === 0 ? (spec.negativeWeight ?? 1) : 1))
    return fitPlatt(z, y, weights)
  })
}

function report(title, groups) {
  console.log(`\n${title}\n\n${METRICS_HEADER}`)
  for (const [label, scores, labels] of groups) console.log(metricsRow(label, metrics(scores, labels)))
}

for (const task of tasks) {
  const base = TASKS[task]
  if (base === undefined) throw new Error(`unknown task ${task}`)
  // Training settings may be overridden for experiments: --epochs, --rate, --l2.
  const overrides = Object.fromEntries(
    ['epochs', 'rate', 'l2'].filter((k) => args[k] !== undefined).map((k) => [k, Number(args[k])]),
  )
  const spec = { ...base, training: { ...base.training, ...overrides } }
  const started = performance.now()
  const rows = readLabelled(args.data, task)
  const evalRows = typeof args.eval === 'string' ? readLabelled(args.eval, task) : []
  console.log(`${task}: ${rows.length} training rows, ${evalRows.length} evaluation rows`)
  const vectors = featurizeAll(rows, spec.features)
  const evalVectors = featurizeAll(evalRows, spec.features)

  if (args.cv) {
    // Train on every source but one, measure on that one.
    // --holdout a,b limits the cross-validation to those sources (for quicker experiments).
    const only = typeof args.holdout === 'string' ? new Set(args.holdout.split(',')) : null
    const sources = [...new Set([...rows, ...evalRows].map((r) => r.source))]
      .filter((s) => only === null || only.has(s))
      .sort()
    const groups = []
    const all = [[], []]
    for (const source of sources) {
      const trainIdx = []
      rows.forEach((row, i) => {
        if (row.source !== source) trainIdx.push(i)
      })
      const trainRows = trainIdx.map((i) => rows[i])
      const trainVectors = trainIdx.map((i) => vectors[i])
      const heads = trainHeads(spec, trainRows, trainVectors)
      const calibration = calibrate(spec, trainRows, outOfFoldLogits(spec, trainRows, trainVectors))
      const test = [
        ...rows.flatMap((r, i) => (r.source === source ? [[r, vectors[i]]] : [])),
        ...evalRows.flatMap((r, i) => (r.source === source ? [[r, evalVectors[i]]] : [])),
      ]
      const main = heads[0]
      const { a, b } = calibration[0]
      const scores = test.map(([, x]) => 1 / (1 + Math.exp(-(a * rawLogit(main.model, x) + b))))
      const labels = test.map(([r]) => r.label)
      groups.push([`${task} / ${source}`, scores, labels])
      all[0].push(...scores)
      all[1].push(...labels)
      console.error(
        `  ${source}: ${test.length} rows, ${((performance.now() - started) / 1000).toFixed(0)} s`,
      )
    }
    groups.push([`${task} / all (pooled)`, all[0], all[1]])
    report(`Cross-validation by source (${task}): each source scored by a model that never saw it`, groups)
    continue
  }

  const calibration = calibrate(spec, rows, outOfFoldLogits(spec, rows, vectors))
  const heads = trainHeads(spec, rows, vectors)
  const sources = [...new Set(rows.map((r) => r.source))].sort()
  const bytes = serializeModel(
    {
      task,
      features: spec.features,
      training: {
        command: `npm run train:detectors -- --data DIR --task ${task} --seed ${seed}`,
        seed,
        rows: rows.length,
        positives: rows.filter((r) => r.label === 1).length,
        sources,
        options: spec.training,
      },
    },
    heads.map(({ head, model }, h) => ({
      name: head.name,
      bias: model.bias,
      weights: model.weights,
      calibration: calibration[h],
    })),
  )
  mkdirSync(out, { recursive: true })
  const path = join(out, `${task}.wdm`)
  writeFileSync(path, bytes)
  console.log(
    `wrote ${path} (${(bytes.length / 1024).toFixed(0)} KB) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  )
  if (evalRows.length > 0) {
    const main = heads[0]
    const { a, b } = calibration[0]
    const scores = evalVectors.map((x) => 1 / (1 + Math.exp(-(a * rawLogit(main.model, x) + b))))
    const bySource = new Map()
    evalRows.forEach((r, i) => {
      const g = bySource.get(r.source) ?? [[], []]
      g[0].push(scores[i])
      g[1].push(r.label)
      bySource.set(r.source, g)
    })
    report(
      `Float model on ${args.eval} (before 8-bit quantisation)`,
      [...bySource]
        .map(([s, [x, y]]) => [`${task} / ${s}`, x, y])
        .concat([[`${task} / all`, scores, evalRows.map((r) => r.label)]]),
    )
  }
}
