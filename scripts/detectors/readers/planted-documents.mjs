// The `doc-*` sources (documents.mjs): passages, e-mails, tables, code, product pages and
// how-tos, each clean and with an instruction to the AI planted in it. Their text comes from
// xquad's paragraphs, the Python / JS / TS files of four repositories, public attack strings of
// other training sources, and self-instruct's numbered model answers.
import { buildDocuments } from '../documents.mjs'
import { hashString, seededShuffle } from '../mine.mjs'
import { random } from '../random.mjs'
import { normalize } from './text.mjs'
import { xquadPassages } from './xquad.mjs'

const CODE = /\.(?:py|js|jsx|ts|tsx)$/
const RESPONSES = 'human_eval/predictions/text-davinci-003_predictions.jsonl'

/**
 * The documents of the entry's source, built once a run. `repos` names the repositories read:
 * `{xquad, code: [...], selfInstruct}` (REPOS entries).
 */
export function plantedDocuments(repos) {
  return async ({ entry, seed, devTexts, filesOf, rowsOf, once }) => {
    const docs = await once('documents', async () => {
      const passages = xquadPassages(filesOf(repos.xquad), seed)
      const code = []
      for (const repo of repos.code) {
        const files = filesOf(repo)
        const paths = files.list('.').filter((p) => CODE.test(p))
        for (const [n, blob] of files.blobs(paths).entries()) {
          const lines = blob.toString('utf8').split('\n')
          const rand = random(seed ^ hashString(`code/${paths[n]}`))
          for (let i = 0; i < lines.length; ) {
            const len = 12 + Math.floor(rand() * 29)
            const chunk = lines.slice(i, i + len)
            if (chunk.filter((l) => l.trim()).length >= 8 && chunk.every((l) => l.length < 200))
              code.push({ lines: chunk, path: paths[n], row: i, ...repo })
            i += len
          }
        }
      }
      const ok = (r) => r.text.length <= 400 && !devTexts.has(normalize(r.text))
      const attacks = [
        ...(await rowsOf('deepset-train')).filter((r) => r.label === 1),
        ...(await rowsOf('promptinject')),
        ...(await rowsOf('llm-guard-tests')).filter((r) => r.label === 1),
        ...seededShuffle(await rowsOf('vigil-bypass'), 'doc/vigil', seed).slice(0, 300),
      ].filter(ok)
      const responses = []
      for (const [i, line] of filesOf(repos.selfInstruct).text(RESPONSES).split('\n').entries()) {
        if (!line.trim()) continue
        const text = String(JSON.parse(line).response ?? '').trim()
        if (/^\s*(?:1\.|Step 1)/m.test(text) && /^\s*(?:2\.|Step 2)/m.test(text) && text.length < 2500)
          responses.push({ text, path: RESPONSES, row: i, ...repos.selfInstruct })
      }
      return buildDocuments({ passages, code, attacks, responses, seed })
    })
    return docs.filter((r) => r.source === entry.source)
  }
}
