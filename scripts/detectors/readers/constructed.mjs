// Sources built by this project's scripts (no file read): attacks in ten languages and
// role-play framings (attacks.mjs), benign prompts with trigger words (benign-templates.mjs),
// and counter-speech, negation, identity and threat statements for toxicity
// (counter-speech.mjs, which quotes ToxiGen's hate statements inside condemnations).
import { buildAttacks } from '../attacks.mjs'
import { benignTriggerPrompts } from '../benign-templates.mjs'
import { buildCounterSpeech } from '../counter-speech.mjs'
import { seededShuffle } from '../mine.mjs'
import { guessLang, normalize } from './text.mjs'

/** The rows of attacks.mjs for the entry's source (`attacks-multilingual`, `attacks-roleplay`). */
export function readAttacks({ entry, seed }) {
  return buildAttacks(seed)
    .filter((r) => r.source === entry.source)
    .map(({ source: _, ...r }) => ({ ...r, path: 'scripts/detectors/attacks.mjs', constructed: true }))
}

/** benign-templates.mjs: benign prompts with trigger words -> 0, category = form. */
export function readBenignTemplates({ seed }) {
  return benignTriggerPrompts(seed).map((r) => ({
    label: 0,
    category: r.category,
    text: r.text,
    lang: guessLang(r.text),
    path: 'scripts/detectors/benign-templates.mjs',
    row: r.row,
    constructed: true,
    note: 'benign trigger-word prompt',
  }))
}

/**
 * counter-speech.mjs's rows for the entry's source (`counter-*`). Built once a run from 1,500
 * of the `toxigen` source's hate statements (none of the development set).
 */
export async function readCounterSpeech({ entry, seed, devTexts, entryOf, rowsOf, once }) {
  const rows = await once('counter-speech', async () => {
    const toxigen = entryOf('toxigen')
    const hate = (await rowsOf('toxigen')).filter((r) => r.label === 1 && !devTexts.has(normalize(r.text)))
    const unique = [...new Map(hate.map((r) => [normalize(r.text), r])).values()]
    const hateStatements = seededShuffle(unique, 'counter/toxigen', seed)
      .slice(0, 1500)
      .map((r) => ({
        text: r.text,
        origin: {
          repo: toxigen.repo,
          commit: toxigen.commit,
          license: toxigen.license,
          path: r.path,
          row: r.row,
        },
      }))
    return buildCounterSpeech({ hateStatements, seed })
  })
  return rows
    .filter((r) => r.source === entry.source)
    .map(({ source, quoted, ...r }) => ({
      ...r,
      lang: 'en',
      path: 'scripts/detectors/counter-speech.mjs',
      ...(quoted ?? {}),
      constructed: true,
      ...(quoted
        ? { note: `quotes ${quoted.repo} ${quoted.path} row ${quoted.row} inside a condemnation` }
        : {}),
    }))
}
