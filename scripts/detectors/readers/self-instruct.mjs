// yizhongw/self-instruct: the seed tasks and user-oriented instructions, the T0 training prompts
// per template, and the models' predictions on the human evaluation set.
import { mineUnits, seededShuffle, sentences } from '../mine.mjs'
import { requireTriggers } from './mined.mjs'

// Benign prompts with words that attacks also use: kept in full from the large instruction sources.
const TRIGGER_WORDS =
  /\b(?:ignor(?:e|ed|es|ing)|forget|forgot|disregard|pretend|act(?:ing)? as|role ?play|system|password|secret|jailbreak|override|bypass|instructions?|rules?)\b/i

const T0_DIR = 'data/finetuning/t0_train_50k/data_per_template/'
const T0_PER_TEMPLATE = 12

/** Task instructions -> 0 "instruction"; instruction + an instance's input -> 0 "instruction with input". */
export function readSelfInstruct({ entry, files }) {
  const rows = []
  for (const path of entry.paths) {
    const lines = files
      .text(path)
      .split('\n')
      .filter((l) => l.trim())
    for (const [i, line] of lines.entries()) {
      const task = JSON.parse(line)
      rows.push({ label: 0, category: 'instruction', text: task.instruction, lang: 'en', path, row: i })
      for (const inst of task.instances ?? []) {
        if (!inst.input?.trim()) continue
        rows.push({
          label: 0,
          category: 'instruction with input',
          text: `${task.instruction}\n\n${inst.input}`,
          lang: 'en',
          path,
          row: i,
        })
      }
    }
  }
  return rows
}

/** T0 prompts -> 0, category = template: a seeded 12 per template, and every one with a trigger word. */
export function readSelfInstructT0({ files, seed }) {
  const paths = files.list(T0_DIR).filter((p) => p.endsWith('.jsonl'))
  const blobs = files.blobs(paths)
  const rows = []
  for (const [n, path] of paths.entries()) {
    const template = path.slice(T0_DIR.length).replace(/\.jsonl$/, '')
    const prompts = blobs[n]
      .toString('utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l, i) => ({ i, text: JSON.parse(l).prompt }))
    const sampled = new Set(seededShuffle(prompts, `t0/${template}`, seed).slice(0, T0_PER_TEMPLATE))
    for (const p of prompts) {
      if (!sampled.has(p) && !TRIGGER_WORDS.test(p.text)) continue
      rows.push({ label: 0, category: template, text: p.text, lang: 'en', path, row: p.i })
    }
  }
  return rows
}

/** Prompts and response sentences of the predictions, and T0 prompts, that hold a mined trigger -> 0. */
export function readMinedSelfInstruct({ files, triggers }) {
  const { mined, heldOut } = requireTriggers(triggers)
  const units = []
  for (const path of files.list('human_eval/predictions/').filter((p) => p.endsWith('.jsonl'))) {
    for (const [i, line] of files.text(path).split('\n').entries()) {
      if (!line.trim()) continue
      const r = JSON.parse(line)
      units.push({ text: r.prompt?.replace(/\nOutput:\s*$/, '').trim(), path, row: i, kind: 'prompt' })
      for (const s of sentences(String(r.response ?? '')))
        units.push({ text: s, path, row: i, kind: 'sentence' })
    }
  }
  const paths = files.list(T0_DIR).filter((p) => p.endsWith('.jsonl'))
  for (const [n, blob] of files.blobs(paths).entries()) {
    for (const [i, line] of blob.toString('utf8').split('\n').entries()) {
      if (line.trim()) units.push({ text: JSON.parse(line).prompt, path: paths[n], row: i, kind: 'prompt' })
    }
  }
  return mineUnits(units, mined, 'mined-self-instruct', heldOut)
}
