// f/awesome-chatgpt-prompts: role and task prompts ("I want you to act as ..."), one CSV.
import { csvObjects } from './formats.mjs'
import { guessLang } from './text.mjs'

const JAILBREAK_LIKE =
  /\bjail ?break|\bDAN\b|developer mode|do anything now|no (?:restrictions|filters|limits)|unfiltered|uncensored|ignore (?:all|any|previous|your)|without (?:any )?(?:restrictions|censorship|ethic)/i

/** Every prompt -> 0 "role prompt", except the few that read as jailbreaks. */
export function readAwesomePrompts({ entry, files }) {
  const path = entry.paths[0]
  const rows = []
  for (const [i, r] of csvObjects(files.text(path)).entries()) {
    if (JAILBREAK_LIKE.test(`${r.act}\n${r.prompt}`)) continue
    rows.push({ label: 0, category: 'role prompt', text: r.prompt, lang: guessLang(r.prompt), path, row: i })
  }
  return rows
}
