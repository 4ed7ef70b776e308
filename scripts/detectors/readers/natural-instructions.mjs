// allenai/natural-instructions-v1: GPT-3's predictions per task and prompt encoding; each
// prediction's `input` is the encoded task prompt with one instance.
import { mineUnits, sentences } from '../mine.mjs'
import { requireTriggers } from './mined.mjs'

const DIR = 'predictions/gpt3_outputs/'

/** The `@0_100` files' inputs -> 0, category = prompt encoding. */
export function readNaturalInstructions({ files }) {
  const paths = files.list(DIR).filter((p) => p.endsWith('@0_100.json'))
  const rows = []
  for (const path of paths) {
    const encoding = path.split('@_')[1].replace(/@0_100\.json$/, '')
    for (const [i, p] of JSON.parse(files.text(path)).predictions.entries()) {
      rows.push({ label: 0, category: `task prompt (${encoding})`, text: p.input, lang: 'en', path, row: i })
    }
  }
  return rows
}

/** Every file's inputs, whole and by sentence, that hold a mined trigger -> 0. */
export function readMinedNaturalInstructions({ files, triggers }) {
  const { mined, heldOut } = requireTriggers(triggers)
  const units = []
  for (const path of files.list(DIR).filter((p) => p.endsWith('.json'))) {
    for (const [i, p] of JSON.parse(files.text(path)).predictions.entries()) {
      units.push({ text: p.input, path, row: i, kind: 'prompt' })
      for (const s of sentences(p.input)) units.push({ text: s, path, row: i, kind: 'sentence' })
    }
  }
  return mineUnits(units, mined, 'mined-natural-instructions-v1', heldOut)
}
