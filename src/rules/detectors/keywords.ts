import type { Finding, TargetText } from '../types.js'
import { CodePointIndex } from './code-points.js'
import { foldPhrase, foldTarget } from './fold.js'
import { keywordsPending } from './pending.js'
import { PhraseSet, unfold } from './phrase-set.js'
import type { TextMatcher } from './types.js'

/**
 * A keywords rule: each phrase, case-insensitively and as whole words, after NFKC and case
 * folding of both phrase and text (`CAFÉ` matches `café`, `ﬁnance` matches `finance`, `cafés`
 * does not match `café`); a space inside a phrase matches any run of whitespace. The phrases are
 * compiled once into one automaton, so a text costs one pass whatever the number of phrases.
 */
export function keywordsMatcher(phrases: readonly string[]): TextMatcher {
  return keywordsDetector(phrases).match
}

/** A keywords rule's matcher, and where a phrase may still be in progress in a growing text (pending.ts). */
export function keywordsDetector(phrases: readonly string[]): {
  match: TextMatcher
  pending: (text: string, from?: number) => number
} {
  const set = new PhraseSet(phrases.map(foldPhrase))
  const match = (target: TargetText): Finding[] => {
    if (set.empty || target.text.length === 0) return []
    const folded = foldTarget(target)
    const hits = set.search(folded.text)
    if (hits.length === 0) return []
    const index = new CodePointIndex(target.text)
    return unfold(folded, hits).map((m) => index.finding('keyword', target, m.start, m.end))
  }
  return { match, pending: keywordsPending(set) }
}
