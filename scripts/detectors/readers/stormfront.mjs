// Vicomtech/hate-speech-dataset: Stormfront forum sentences, one file each, labelled in
// annotations_metadata.csv (hate, noHate, relation, idk/skip).
import { csvObjects } from './formats.mjs'

/** hate -> 1 "hate", noHate -> 0 "not hate"; "relation" and "idk/skip" skipped. */
export function readStormfront({ files }) {
  const keep = csvObjects(files.text('annotations_metadata.csv')).filter(
    (r) => r.label === 'hate' || r.label === 'noHate',
  )
  const texts = files.blobs(keep.map((r) => `all_files/${r.file_id}.txt`))
  return keep.map((r, i) => ({
    label: r.label === 'hate' ? 1 : 0,
    category: r.label === 'hate' ? 'hate' : 'not hate',
    text: texts[i].toString('utf8'),
    lang: 'en',
    path: `all_files/${r.file_id}.txt`,
    row: i,
  }))
}
