#!/usr/bin/env node
// Benign prompts that look like attacks to a model, for prompt_injection's training: role-play,
// persona and code instructions from GPTeacher (MIT), read at a pinned commit from a mirror.
// Every row is kept when no model is given; with --model, the rows the model scores over
// --above (the hard ones, default 0.2) are all kept and the others sampled down to --easy rows
// (default 600), so the file weighs where the model errs.
//
//   node scripts/detectors/hard-negatives.mjs --mirrors /work/.mirror --out DIR \
//     [--model models/prompt_injection.wdm] [--above 0.2] [--easy 600] [--exclude DIR ...]
//
// Writes DIR/prompt_injection.gpteacher.jsonl in the development set's format. Texts found in an
// --exclude directory's JSON Lines (the held-out measure sets) are never written.
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Classifier, parseModel } from '../../dist/rules/detectors/classifier/linear.js'
import { random } from './random.mjs'

const REPO = 'teknium1/GPTeacher'
const COMMIT = '481075123c29854bddb82655badeef6a438f2436'
const LICENSE = 'MIT'
const FILES = [
  ['gpteacher-roleplay', 'Roleplay/roleplay-simple-deduped-roleplay-instruct.json', 'role-play instruction'],
  ['gpteacher-codegen', 'Codegen/codegen-instruct.json', 'code instruction'],
  ['gpteacher-toolformer', 'Toolformer/toolformer-dedupe-only-dataset.json', 'tool-use instruction'],
]
const PER_SOURCE = 2500

const argv = process.argv.slice(2)
const opt = { mirrors: null, out: null, model: null, above: 0.2, easy: 600, exclude: [] }
for (let i = 0; i < argv.length; i++) {
  const name = argv[i].replace(/^--/, '')
  const value = argv[++i]
  if (name === 'exclude') opt.exclude.push(value)
  else opt[name] = ['above', 'easy'].includes(name) ? Number(value) : value
}
if (!opt.mirrors || !opt.out) {
  console.error('usage: hard-negatives.mjs --mirrors DIR --out DIR [--model FILE] [--above 0.2] [--easy 600]')
  process.exit(2)
}

const normal = (text) => text.trim().replace(/\s+/g, ' ').toLowerCase()
const excluded = new Set()
for (const dir of opt.exclude)
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.jsonl')))
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n'))
      if (line.trim() !== '') excluded.add(normal(JSON.parse(line).text))

const gitDir = join(opt.mirrors, REPO.replace('/', '+'), 'repo')
const read = (path) =>
  execFileSync('git', ['--git-dir', gitDir, 'show', `${COMMIT}:${path}`], { maxBuffer: 1 << 28 })
const classifier = opt.model ? new Classifier(parseModel(readFileSync(opt.model))) : null
const rand = random(20240611)
const lines = []
const seen = new Set()
for (const [source, path, category] of FILES) {
  const rows = JSON.parse(read(path).toString('utf8'))
  const candidates = []
  rows.forEach((row, index) => {
    const instruction = String(row.instruction ?? '').trim()
    const input = String(row.input ?? '').trim()
    // The instruction alone, or with its input the way a user would paste it.
    const text = input !== '' && index % 2 === 1 ? `${instruction}\n\n${input}` : instruction
    const key = normal(text)
    if (text.length < 12 || seen.has(key) || excluded.has(key)) return
    seen.add(key)
    candidates.push({ text, index })
  })
  let kept = candidates
  if (classifier !== null) {
    const hard = []
    const easy = []
    for (const c of candidates) (classifier.score(c.text).probabilities[0] > opt.above ? hard : easy).push(c)
    for (let i = easy.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1))
      ;[easy[i], easy[j]] = [easy[j], easy[i]]
    }
    kept = [...hard, ...easy.slice(0, opt.easy)]
    console.error(
      `${source}: ${hard.length} over ${opt.above}, ${Math.min(easy.length, opt.easy)} others kept`,
    )
  }
  kept = kept.sort((a, b) => a.index - b.index).slice(0, PER_SOURCE)
  for (const c of kept)
    lines.push(
      JSON.stringify({
        id: `${source}-${c.index}`,
        task: 'prompt_injection',
        source,
        label: 0,
        category,
        text: c.text,
        origin: { repo: REPO, commit: COMMIT, path, row: c.index, license: LICENSE },
      }),
    )
}
writeFileSync(join(opt.out, 'prompt_injection.gpteacher.jsonl'), `${lines.join('\n')}\n`)
console.error(`wrote ${lines.length} rows to ${join(opt.out, 'prompt_injection.gpteacher.jsonl')}`)
