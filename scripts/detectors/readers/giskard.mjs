// Giskard-AI/prompt-injections: one CSV of prompts (`name`, `group`, `prompt`, `language`, ...).
import { csvObjects } from './formats.mjs'

/** A reader of one `group`: every prompt -> 1; "Hijacking attacks" are "goal hijacking". */
export function readGiskardGroup(group) {
  return ({ entry, files }) => {
    const path = entry.paths[0]
    const rows = []
    for (const [i, r] of csvObjects(files.text(path)).entries()) {
      if (r.group !== group) continue
      const category = group === 'Hijacking attacks' ? 'goal hijacking' : r.name
      rows.push({ label: 1, category, text: r.prompt, lang: r.language || undefined, path, row: i })
    }
    return rows
  }
}
