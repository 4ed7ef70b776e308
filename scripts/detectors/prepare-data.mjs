#!/usr/bin/env node
// Builds the training text for the offline `prompt_injection` and `toxicity` classifiers, and the
// held-out measure sets, from public repositories mirrored as bare git directories, read at
// pinned commits.
//
//   node scripts/detectors/triggers.mjs --data BASE/prompt_injection.jsonl --out OUT/triggers.json
//   node scripts/detectors/prepare-data.mjs --mirrors /work/.mirror --out OUT \
//     [--dev ../shared/datasets/detectors] [--triggers OUT/triggers.json]
//
// What is read is the table of sources.mjs: each source's task, role (train, measure, held-out),
// repository, commit, paths, licence and reader (readers/). The rules (development-set and
// measure texts dropped, conflicts and duplicates dropped, caps) are assemble.mjs's.
//
// --triggers names the trigger words (triggers.mjs: the n-grams the shipped model weighs most,
// split into mined and held-out ones); without it the `mined-*` sources and the trigger measure
// sets are skipped. OUT gets `prompt_injection.jsonl` and `toxicity.jsonl`, one labelled text a
// line in the development-set format:
//   {id, task, source, label, category, text, lang?, reading?, origin: {repo, commit, path, row, license}, constructed?, note?}
// and `measure/<task>.<set>.jsonl` (the measure and held-out sets, which no training row
// repeats), `manifest.json` and `SOURCES.md` (rows, repository, commit, paths and licence per
// source). Rows read as documents (the `doc-*` sources and BIPIA) carry `reading: "document"`.
// The same mirrors, seed and trigger file give the same bytes.
//
// Each mirror is looked up as `<mirrors>/<owner>+<name>/repo` (or `<mirrors>/<owner>+<name>` when
// that is itself a git directory), and read with `git cat-file` at the commit the table pins.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { buildMeasureSets, buildTask, manifestEntry, sourcesMarkdown } from './assemble.mjs'
import { gitMirrors } from './files.mjs'
import { normalize } from './readers/text.mjs'
import { SEED, SOURCES } from './sources.mjs'

const TASKS = ['prompt_injection', 'toxicity']

function parseArgs(argv) {
  const args = {
    mirrors: '/work/.mirror',
    out: '/work/data/detectors',
    dev: '../shared/datasets/detectors',
    triggers: '',
  }
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, '')
    if (!(key in args)) throw new Error(`unknown option ${argv[i]}`)
    args[key] = argv[++i]
  }
  return args
}

function loadDevTexts(devDir, task) {
  const file = join(devDir, `${task}.jsonl`)
  if (!existsSync(file)) throw new Error(`development set not found: ${file} (pass --dev)`)
  const texts = new Set()
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim()) texts.add(normalize(JSON.parse(line).text))
  }
  return texts
}

const jsonLines = (rows) => `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`

async function main() {
  const args = parseArgs(process.argv.slice(2))
  const mirrorsRoot = resolve(args.mirrors)
  if (!existsSync(mirrorsRoot) || !statSync(mirrorsRoot).isDirectory()) {
    throw new Error(`mirrors folder not found: ${mirrorsRoot}`)
  }
  const outDir = resolve(args.out)
  mkdirSync(outDir, { recursive: true })
  let triggers = null
  if (args.triggers) {
    const file = JSON.parse(readFileSync(resolve(args.triggers), 'utf8'))
    triggers = { mined: file.mined.map((t) => t.phrase), heldOut: file.heldOut.map((t) => t.phrase) }
  }
  const tree = gitMirrors(mirrorsRoot)
  const common = { sources: SOURCES, tree, seed: SEED, triggers }

  const measured = await buildMeasureSets(common)
  mkdirSync(join(outDir, 'measure'), { recursive: true })
  for (const { name, task, records } of measured.sets) {
    writeFileSync(join(outDir, 'measure', `${task}.${name}.jsonl`), jsonLines(records))
    const { rows, positives, negatives } = measured.summary.sets[name]
    process.stdout.write(`measure ${task}.${name}: ${rows} rows (+${positives} / -${negatives})\n`)
  }
  for (const m of measured.summary.missing) process.stdout.write(`measure: not built: ${m}\n`)

  const summary = {}
  for (const task of TASKS) {
    const devTexts = loadDevTexts(resolve(args.dev), task)
    const { out, stats, skipped } = await buildTask({
      ...common,
      task,
      devTexts,
      measureTexts: measured.texts,
    })
    for (const source of skipped) process.stderr.write(`skipped ${source}: no --triggers file\n`)
    writeFileSync(join(outDir, `${task}.jsonl`), jsonLines(out))
    summary[task] = Object.fromEntries(stats)
    const totals = [0, 0]
    for (const r of out) totals[r.label]++
    process.stdout.write(`${task}: ${out.length} rows (+${totals[1]} / -${totals[0]})\n`)
    for (const [source, st] of stats) {
      process.stdout.write(
        `  ${source.padEnd(24)} +${st.kept[1]} -${st.kept[0]}  (read ${st.read}, short ${st.short}, dev ${st.dev}, measure ${st.measure}, ` +
          `conflict ${st.conflict}, dup ${st.duplicate}, capped ${st.capped})\n`,
      )
    }
  }
  const sources = SOURCES.filter((s) => s.role === 'train').map(manifestEntry)
  writeFileSync(
    join(outDir, 'manifest.json'),
    `${JSON.stringify({ sources, summary, measure: measured.summary }, null, 2)}\n`,
  )
  writeFileSync(join(outDir, 'SOURCES.md'), sourcesMarkdown(SOURCES, summary, measured.summary))
}

await main()
