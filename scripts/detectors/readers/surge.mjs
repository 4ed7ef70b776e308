// surge-ai/toxicity: social-media comments, `text` and `is_toxic` ("Toxic" / "Not Toxic").
import { csvObjects } from './formats.mjs'

/** is_toxic "Toxic" -> 1, else 0; category = is_toxic. */
export function readSurge({ entry, files }) {
  const path = entry.paths[0]
  return csvObjects(files.text(path)).map((r, i) => ({
    label: r.is_toxic === 'Toxic' ? 1 : 0,
    category: r.is_toxic,
    text: r.text,
    lang: 'en',
    path,
    row: i,
  }))
}
