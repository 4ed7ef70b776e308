// dair-ai/Prompt-Engineering-Guide: the English pages' prose, for benign sentences that hold
// trigger words. The pages about attacks (adversarial prompting, risks, jailbreaks, injections)
// are not read: they quote attacks.
import { markdownProse, mineUnits, sentences } from '../mine.mjs'
import { requireTriggers } from './mined.mjs'

/** Prose sentences of pages/**\/*.en.mdx that hold a mined trigger -> 0. */
export function readMinedPromptGuide({ files, triggers }) {
  const { mined, heldOut } = requireTriggers(triggers)
  const units = []
  const paths = files
    .list('pages/')
    .filter((p) => p.endsWith('.en.mdx') && !/adversarial|\/risks\/|jailbreak|injection/.test(p))
  for (const [n, blob] of files.blobs(paths).entries()) {
    for (const [i, s] of sentences(markdownProse(blob.toString('utf8'))).entries()) {
      if (/[<>{}]|="|https?:\/\//.test(s)) continue // markup left over from MDX components
      units.push({ text: s, path: paths[n], row: i, kind: 'sentence' })
    }
  }
  return mineUnits(units, mined, 'mined-prompt-guide', heldOut)
}
