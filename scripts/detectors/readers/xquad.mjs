// google-deepmind/xquad: SQuAD-style Wikipedia paragraphs with questions, in 12 languages.
import { hashString } from '../mine.mjs'
import { random } from '../random.mjs'

export const XQUAD_LANGS = ['ar', 'de', 'el', 'en', 'es', 'hi', 'ro', 'ru', 'th', 'tr', 'vi', 'zh']

/** Paragraphs -> 0 "passage", questions -> 0 "question". */
export function readXquad({ files }) {
  const rows = []
  for (const lang of XQUAD_LANGS) {
    const path = `xquad.${lang}.json`
    const data = JSON.parse(files.text(path)).data
    let row = 0
    for (const article of data) {
      for (const para of article.paragraphs) {
        rows.push({ label: 0, category: 'passage', text: para.context, lang, path, row: row++ })
        for (const qa of para.qas)
          rows.push({ label: 0, category: 'question', text: qa.question, lang, path, row: row++ })
      }
    }
  }
  return rows
}

/** Passages for documents: 1-3 consecutive paragraphs of an article (seeded), under its title. */
export function xquadPassages(files, seed) {
  const passages = []
  for (const lang of XQUAD_LANGS) {
    const path = `xquad.${lang}.json`
    for (const [a, article] of JSON.parse(files.text(path)).data.entries()) {
      const paras = article.paragraphs.map((p) => p.context)
      const rand = random(seed ^ hashString(`doc/${lang}/${a}`))
      for (let i = 0; i < paras.length; ) {
        const n = 1 + Math.floor(rand() * 3)
        passages.push({
          title: article.title.replaceAll('_', ' '),
          paragraphs: paras.slice(i, i + n),
          lang,
          path,
          row: `${a}:${i}`,
        })
        i += n
      }
    }
  }
  return passages
}
