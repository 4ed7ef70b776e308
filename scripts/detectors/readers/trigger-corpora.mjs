// Benign text read by no training source (GSM8K's questions, Brex's prompt-engineering guide,
// the MT-Bench and Vicuna-Bench questions), mined for trigger words: the held-out triggers (to
// see whether mining generalises) and, as a control, the mined ones.
import { markdownProse, mineUnits, sentences } from '../mine.mjs'
import { requireTriggers } from './mined.mjs'

const GSM8K = ['grade_school_math/data/train.jsonl', 'grade_school_math/data/test.jsonl']

/**
 * A reader mining the corpora for `which` of the trigger lists ('heldOut' or 'mined'); `repos`
 * names the repositories: `{gsm8k, brex, fastchat}`, FastChat's questions being the rows of the
 * `kept-out-benign` set.
 */
export function readTriggerCorpora(which, key, repos) {
  return async ({ filesOf, rowsOf, triggers }) => {
    const units = (await rowsOf('kept-out-benign')).map((r) => ({ src: repos.fastchat, ...r }))
    const gsm = filesOf(repos.gsm8k)
    for (const path of GSM8K) {
      for (const [i, line] of gsm.text(path).split('\n').entries())
        if (line.trim())
          units.push({ src: repos.gsm8k, text: JSON.parse(line).question, path, row: i, kind: 'prompt' })
    }
    for (const [i, s] of sentences(markdownProse(filesOf(repos.brex).text('README.md'))).entries()) {
      if (!/[<>{}]|="/.test(s))
        units.push({ src: repos.brex, text: s, path: 'README.md', row: i, kind: 'sentence' })
    }
    return mineUnits(units, requireTriggers(triggers)[which], key)
  }
}
