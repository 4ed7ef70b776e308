// Trains Warden's offline classifiers (prompt_injection, toxicity) from labelled JSON Lines and
// writes their weights to models/. Deterministic for a given data set and seed.
//
//   npm run train:detectors -- --data DIR [--task prompt_injection|toxicity] [--seed 1]
//                              [--eval DIR] [--cv [--holdout a,b]] [--cv-lang SOURCES] [--out models]
//                              [--negative-weight N] [--epochs N] [--rate N] [--l2 N]
//
// DIR holds <task>.jsonl files (and <task>.<name>.jsonl beside them), one
// `{id, task, source, label, category, text, origin, reading?, planted?}` a line (the format of the
// development set). Rows with `reading: "document"` are documents (a `context` document or a
// tool's result): the document head learns from their windows (`documentExamples`, labelled by
// the `planted` span), the message heads never see them.
//
// Calibration (Platt scaling of each head's logit) is fitted on 5-fold out-of-fold scores, the
// negatives weighing `negativeWeight` times the positives (the prior the scores assume).
//
// With --cv it writes nothing and instead reports cross-validation by source: for each source, a
// model trained on every other source scores it (the training data's rows of that source and the
// --eval set's), calibrated as the shipped model is.
//
// With --cv-lang a,b it writes nothing and instead reports cross-validation by language over the
// rows of those sources (rows with `lang`, and `group` naming a prompt the same in every
// language), in two tables: by prompt (half of the prompts held out in every language, as the
// shipped model meets new prompts in its languages) and by language (a language left out too, as
// it meets a language it never saw).
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { FeatureAccumulator, featurize, prepareText } from '../../dist/rules/detectors/classifier/features.js'
import { serializeModel } from '../../dist/rules/detectors/classifier/linear.js'
import {
  balancedWeights,
  documentExamples,
  fitPlatt,
  flags,
  locatePlants,
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
const FOLDS = 5

/**
 * Each head's examples over a set of rows: a feature vector, its label (null: scored, not trained
 * on) and the row it came from. A message head reads rows whole; the document head reads document
 * rows in windows and other rows whole.
 */
function headExamples(spec, rows) {
  const accumulator = new FeatureAccumulator(spec.features.bits)
  const whole = new Map()
  const wholeVector = (i) => {
    let v = whole.get(i)
    if (v === undefined) {
      v = featurize(prepareText(rows[i].text, spec.features), accumulator)
      whole.set(i, v)
    }
    return v
  }
  return spec.heads.map((head) => {
    const vectors = []
    const labels = []
    const rowOf = []
    rows.forEach((row, i) => {
      const y = head.label(row)
      if (y !== 0 && y !== 1) return
      if (head.reading === 'document' && row.reading === 'document') {
        for (const example of documentExamples({ ...row, label: y }, spec.features, accumulator)) {
          vectors.push(example.vector)
          labels.push(example.label)
          rowOf.push(i)
        }
      } else {
        vectors.push(wholeVector(i))
        labels.push(y)
        rowOf.push(i)
      }
    })
    return { head, vectors, labels, rowOf }
  })
}

/** Trains one head on its examples whose rows `keep` accepts. */
function trainHead(spec, rows, examples, keep) {
  const picked = []
  examples.labels.forEach((y, e) => {
    if (y !== null && keep(examples.rowOf[e])) picked.push(e)
  })
  const pseudo = picked.map((e) => ({ source: rows[examples.rowOf[e]].source, label: examples.labels[e] }))
  const boost = spec.sourceWeight ?? (() => 1)
  return trainLogistic(
    picked.map((e) => examples.vectors[e]),
    picked.map((e) => examples.labels[e]),
    balancedWeights(pseudo).map((w, k) => w * boost(pseudo[k].source)),
    { ...spec.training, bits: spec.features.bits, seed },
  )
}

/** A head's raw score of each row it reads that `keep` accepts: its worst example's logit. */
function rowLogits(model, examples, keep, into) {
  examples.vectors.forEach((x, e) => {
    const i = examples.rowOf[e]
    if (!keep(i)) return
    const z = rawLogit(model, x)
    if (!(into[i] >= z)) into[i] = z
  })
}

/**
 * Folds for calibration: rows split at random (seeded), stratified by source and label, so each
 * fold holds a share of every source. (Folds of whole sources were tried: a source left out is
 * scored so unlike the others, pooled ROC-AUC about 0.5, that Platt scaling on those scores is
 * flat or inverted; see the model card.)
 */
function randomFolds(rows, k) {
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
  return fold
}

/** Out-of-fold row logits per head. */
function outOfFoldLogits(spec, rows, examples) {
  const fold = randomFolds(rows, FOLDS)
  const logits = spec.heads.map(() => new Float64Array(rows.length).fill(Number.NaN))
  for (let f = 0; f < FOLDS; f++) {
    examples.forEach((ex, h) => {
      const model = trainHead(spec, rows, ex, (i) => fold[i] !== f)
      rowLogits(model, ex, (i) => fold[i] === f, logits[h])
    })
  }
  return logits
}

/**
 * Platt scaling per head on row logits, negatives weighing `negativeWeight` times the positives
 * (or the head's own `negativeWeight`).
 */
function calibrate(spec, rows, logits, negativeWeight) {
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
    const prior = head.negativeWeight ?? negativeWeight
    const weights = balancedWeights(picked).map((w, i) => w * (y[i] === 0 ? prior : 1))
    return fitPlatt(z, y, weights)
  })
}

/** The head that answers for a row, as a rule reads it: the document head for documents. */
function answeringHead(spec, row) {
  if (row.reading === 'document') {
    const h = spec.heads.findIndex((head) => head.reading === 'document')
    if (h >= 0) return h
  }
  return 0
}

const sigmoid = (z) => 1 / (1 + Math.exp(-z))

/** FNV-1a of a string, unsigned: which half of the prompts a group falls in. */
function fnv32(s) {
  let h = 2166136261
  for (const c of s) h = Math.imul(h ^ c.codePointAt(0), 16777619)
  return h >>> 0
}

function report(title, groups) {
  console.log(`\n${title}\n\n${METRICS_HEADER}`)
  for (const [label, scores, labels] of groups) console.log(metricsRow(label, metrics(scores, labels)))
}

for (const task of tasks) {
  const base = TASKS[task]
  if (base === undefined) throw new Error(`unknown task ${task}`)
  // Training settings may be overridden for experiments: --epochs, --rate, --l2, --negative-weight.
  const overrides = Object.fromEntries(
    ['epochs', 'rate', 'l2'].filter((k) => args[k] !== undefined).map((k) => [k, Number(args[k])]),
  )
  const spec = { ...base, training: { ...base.training, ...overrides } }
  const negativeWeight = Number(args['negative-weight'] ?? spec.negativeWeight ?? 1)
  const started = performance.now()
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`
  const rows = locatePlants(readLabelled(args.data, task))
  const evalRows = typeof args.eval === 'string' ? readLabelled(args.eval, task) : []
  console.log(`${task}: ${rows.length} training rows, ${evalRows.length} evaluation rows`)
  const examples = headExamples(spec, rows)
  console.error(
    `  featurized: ${examples.map((e) => `${e.head.name} ${e.vectors.length}`).join(', ')}, ${elapsed()}`,
  )
  const calibration = calibrate(spec, rows, outOfFoldLogits(spec, rows, examples), negativeWeight)
  console.error(
    `  calibrated: ${calibration.map((c) => `a ${c.a.toFixed(3)} b ${c.b.toFixed(3)}`).join('; ')}, ${elapsed()}`,
  )

  if (typeof args['cv-lang'] === 'string') {
    // Two questions over the listed sources' rows (`lang`, and `group` naming a prompt the same in
    // every language), each language scored by a model that never saw the prompts it is asked about:
    //   seen      half of the prompts held out in every language, the languages all trained on
    //             (the shipped model's case for its own languages); both halves, two models
    //   left out  the language left out too: none of its rows trained on (a language the model
    //             never saw); the held half alternates by language
    const listed = new Set(args['cv-lang'].split(','))
    const inSet = (r) => listed.has(r.source)
    const langOf = (r) => r.lang ?? '?'
    const languages = [...new Set(rows.filter(inSet).map(langOf))].sort()
    const half = (r) => fnv32(r.group ?? r.text) % 2
    const score = (held, tested, into) => {
      const model = trainHead(spec, rows, examples[0], (i) => !held(rows[i]))
      const logits = new Float64Array(rows.length).fill(Number.NaN)
      rowLogits(model, examples[0], (i) => tested(rows[i]) && rows[i].reading !== 'document', logits)
      const { a, b } = calibration[0]
      logits.forEach((z, i) => {
        if (!Number.isNaN(z)) into.set(i, sigmoid(a * z + b))
      })
    }
    const table = (title, scored) => {
      const groups = languages.map((lang) => {
        const picked = [...scored].filter(([i]) => langOf(rows[i]) === lang)
        return [`${task} / ${lang}`, picked.map(([, p]) => p), picked.map(([i]) => rows[i].label)]
      })
      groups.push([
        `${task} / all (pooled)`,
        [...scored.values()],
        [...scored.keys()].map((i) => rows[i].label),
      ])
      report(title, groups)
    }
    const seen = new Map()
    for (const h of [0, 1]) {
      const held = (r) => inSet(r) && half(r) === h
      score(held, held, seen)
      console.error(`  seen, half ${h}: ${elapsed()}`)
    }
    const leftOut = new Map()
    languages.forEach((lang, n) => {
      const held = (r) => inSet(r) && (langOf(r) === lang || half(r) === n % 2)
      score(held, (r) => held(r) && langOf(r) === lang, leftOut)
      console.error(`  left out ${lang}: ${elapsed()}`)
    })
    const names = [...listed].join(', ')
    table(
      `Cross-validation by prompt (${task}; ${names}): languages trained on, the prompts scored never seen`,
      seen,
    )
    table(
      `Cross-validation by language (${task}; ${names}): the language and the prompts scored never seen`,
      leftOut,
    )
    continue
  }

  if (args.cv) {
    // Train on every source but one, score that one; --holdout a,b limits it to those sources.
    const only = typeof args.holdout === 'string' ? new Set(args.holdout.split(',')) : null
    const evalExamples = headExamples(spec, evalRows)
    const sources = [...new Set([...rows, ...evalRows].map((r) => r.source))]
      .filter((s) => only === null || only.has(s))
      .sort()
    const groups = []
    const all = [[], []]
    for (const source of sources) {
      const scores = []
      const labels = []
      // Only the heads that answer for this source's rows are trained without it.
      const answering = new Set(
        [...rows, ...evalRows].filter((r) => r.source === source).map((r) => answeringHead(spec, r)),
      )
      const models = examples.map((ex, h) =>
        answering.has(h) ? trainHead(spec, rows, ex, (i) => rows[i].source !== source) : null,
      )
      for (const [set, setExamples] of [
        [rows, examples],
        [evalRows, evalExamples],
      ]) {
        const logits = spec.heads.map(() => new Float64Array(set.length).fill(Number.NaN))
        models.forEach((model, h) => {
          if (model !== null) rowLogits(model, setExamples[h], (i) => set[i].source === source, logits[h])
        })
        set.forEach((row, i) => {
          if (row.source !== source) return
          const h = answeringHead(spec, row)
          const { a, b } = calibration[h]
          const z = logits[h][i]
          if (Number.isNaN(z)) return
          scores.push(sigmoid(a * z + b))
          labels.push(row.label)
        })
      }
      groups.push([`${task} / ${source}`, scores, labels])
      all[0].push(...scores)
      all[1].push(...labels)
      console.error(`  ${source}: ${scores.length} rows, ${elapsed()}`)
    }
    groups.push([`${task} / all (pooled)`, all[0], all[1]])
    report(`Cross-validation by source (${task}): each source scored by a model that never saw it`, groups)
    continue
  }

  const models = examples.map((ex) => trainHead(spec, rows, ex, () => true))
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
        documents: rows.filter((r) => r.reading === 'document').length,
        sources,
        options: spec.training,
        negativeWeight,
        calibration: `Platt scaling on ${FOLDS}-fold out-of-fold scores`,
      },
    },
    models.map((model, h) => ({
      name: spec.heads[h].name,
      bias: model.bias,
      weights: model.weights,
      calibration: calibration[h],
    })),
  )
  mkdirSync(out, { recursive: true })
  const path = join(out, `${task}.wdm`)
  writeFileSync(path, bytes)
  console.log(`wrote ${path} (${(bytes.length / 1024).toFixed(0)} KB) in ${elapsed()}`)
}
