// t-davidson/hate-speech-and-offensive-language: tweets with a `class` (0 hate speech,
// 1 offensive, 2 neither).
import { csvObjects } from './formats.mjs'

const CLASSES = ['hate speech', 'offensive', 'neither']

/** class 0 and 1 -> 1, 2 -> 0; category = the class's name. */
export function readDavidson({ entry, files }) {
  const path = entry.paths[0]
  return csvObjects(files.text(path)).map((r, i) => ({
    label: r.class === '2' ? 0 : 1,
    category: CLASSES[Number(r.class)],
    text: r.tweet,
    lang: 'en',
    path,
    row: i,
  }))
}
