// What the offline classifiers cost: CPU time per KB of text per task over a mix of texts, the
// worst text's, the memory a loaded model holds, and how long loading and verifying takes.
// Scores with the models directly (the scorers' memory of recent texts is bypassed).
//
//   npm run build && node bench/classifiers.mjs [--data ../shared/datasets/detectors]
//
// The mix: every text of the development set (both tasks, as messages), and documents of 1, 4
// and 16 KB made of its benign texts (prompt_injection's document reading). Per text, the CPU
// time of the fastest of 5 runs. The mean is all the texts' time over all their KB; a text's own
// µs per KB counts a text under 1 KB as 1 KB (a short text's cost is the call's, not its
// length's). Goals: mean at most 30 µs per KB per task, no text over 2 ms
// per KB, at most 30 MB per model, loading under 1 s.
//
// prompt_injection's second stage (models/prompt_injection.onnx, when there): its cost alone on
// every message and document (what a text it reads costs), and the cascade's over the mix, the
// way evaluation asks it: the linear model on every text, the second stage on the messages
// inside its band and on every document under its top. Goals: the cascade's mean at most 300 µs per KB, no
// text over 5 ms per KB.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadNetwork, SECOND_STAGE_BAND } from '../dist/models/second-stage.js'
import { Classifier, parseModel } from '../dist/rules/detectors/classifier/linear.js'

const argv = process.argv.slice(2)
const data = argv.includes('--data')
  ? argv[argv.indexOf('--data') + 1]
  : fileURLToPath(new URL('../../shared/datasets/detectors', import.meta.url))
const models = fileURLToPath(new URL('../models', import.meta.url))

/** A task's texts of the development set; with `label`, only those of that label. */
const texts = (task, label = null) =>
  readFileSync(join(data, `${task}.jsonl`), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l))
    .filter((row) => label === null || row.label === label)
    .map((row) => row.text)

/**
 * Loads and verifies a model. What it holds: the file's bytes (the weights are views into them)
 * and the feature accumulator's three arrays of 2^bits 32-bit numbers.
 */
function load(task) {
  const started = performance.now()
  const bytes = readFileSync(join(models, `${task}.wdm`))
  const classifier = new Classifier(parseModel(bytes))
  classifier.score('warm up')
  const ms = performance.now() - started
  return { classifier, ms, bytes: bytes.length + 3 * 4 * (1 << classifier.model.header.features.bits) }
}

async function cost(run, list) {
  let totalUs = 0
  let totalKb = 0
  let worst = { usPerKb: 0, length: 0 }
  for (const text of list) {
    let best = Infinity
    for (let i = 0; i < 5; i++) {
      const start = process.cpuUsage()
      await run(text)
      const used = process.cpuUsage(start)
      best = Math.min(best, used.user + used.system)
    }
    totalUs += best
    totalKb += text.length / 1024
    const kb = Math.max(1, text.length / 1024)
    if (best / kb > worst.usPerKb) worst = { usPerKb: best / kb, length: text.length }
  }
  return { mean: totalUs / totalKb, worst, n: list.length, kb: totalKb }
}

const benign = [...texts('prompt_injection', 0), ...texts('toxicity', 0)]
const documents = []
for (const size of [1024, 4096, 16384]) {
  for (let start = 0; start < 40; start++) {
    let doc = ''
    for (let i = start; doc.length < size; i = (i + 7) % benign.length) doc += `${benign[i]}\n\n`
    documents.push(doc.slice(0, size))
  }
}

const rows = []
for (const task of ['prompt_injection', 'toxicity']) {
  const { classifier, ms, bytes } = load(task)
  rows.push([`${task}: load and verify`, `${ms.toFixed(1)} ms`, `${(bytes / 1048576).toFixed(1)} MB held`])
  const messages = await cost((t) => classifier.score(t), texts(task))
  rows.push([
    `${task}: messages (${messages.n}, ${messages.kb.toFixed(0)} KB)`,
    `${messages.mean.toFixed(1)} µs/KB mean`,
    `worst ${messages.worst.usPerKb.toFixed(0)} µs/KB (${messages.worst.length} chars)`,
  ])
  if (classifier.readsDocuments) {
    const docs = await cost((t) => classifier.scoreDocument(t), documents)
    rows.push([
      `${task}: documents (${docs.n}, ${docs.kb.toFixed(0)} KB)`,
      `${docs.mean.toFixed(1)} µs/KB mean`,
      `worst ${docs.worst.usPerKb.toFixed(0)} µs/KB (${docs.worst.length} chars)`,
    ])
  }
}
const network = await loadNetwork('prompt_injection')
if (network !== null) {
  const linear = load('prompt_injection').classifier
  const started = performance.now()
  const again = await loadNetwork('prompt_injection')
  await again.score('warm up')
  rows.push([
    'prompt_injection second stage: load and verify',
    `${(performance.now() - started).toFixed(1)} ms`,
    '',
  ])
  const line = (what, c) => [
    `${what} (${c.n}, ${c.kb.toFixed(0)} KB)`,
    `${c.mean.toFixed(1)} µs/KB mean`,
    `worst ${c.worst.usPerKb.toFixed(0)} µs/KB (${c.worst.length} chars)`,
  ]
  const messages = texts('prompt_injection')
  rows.push(line('second stage alone: messages', await cost((t) => network.score(t), messages)))
  rows.push(line('second stage alone: documents', await cost((t) => network.score(t), documents)))
  let asked = 0
  const cascade = async (t, document) => {
    const s = document ? linear.scoreDocument(t).probabilities[0] : linear.score(t).probabilities[0]
    if ((document || s >= SECOND_STAGE_BAND.low) && s <= SECOND_STAGE_BAND.high) {
      asked++
      await network.score(t)
    }
  }
  const mixed = await cost((t) => cascade(t, false), messages)
  rows.push(
    line(
      `cascade: messages, ${((asked / 5 / messages.length) * 100).toFixed(1)}% asked of the second stage`,
      mixed,
    ),
  )
  asked = 0
  const docs = await cost((t) => cascade(t, true), documents)
  rows.push(
    line(
      `cascade: documents, ${((asked / 5 / documents.length) * 100).toFixed(1)}% asked of the second stage`,
      docs,
    ),
  )
  const both = await cost(
    (t) => cascade(t, t.length >= 1024 && documents.includes(t)),
    [...messages, ...documents],
  )
  rows.push(line('cascade: messages and documents together', both))
}
console.log('| what | cost | more |\n|---|---:|---|')
for (const row of rows) console.log(`| ${row.join(' | ')} |`)
