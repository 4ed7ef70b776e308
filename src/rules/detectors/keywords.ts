import type { Finding, TargetText } from '../types.js'
import { CodePointIndex, isAsciiText } from './code-points.js'
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
export function keywordsMatcher(phrases: readonly string[], fastPath = true): TextMatcher {
  return keywordsDetector(phrases, fastPath).match
}

/**
 * A keywords rule's matcher, and where a phrase may still be in progress in a growing text
 * (pending.ts). `fastPath` reads ASCII texts without folding them (off for the tests only).
 */
export function keywordsDetector(
  phrases: readonly string[],
  fastPath = true,
): {
  match: TextMatcher
  pending: (text: string, from?: number) => number
} {
  const set = new PhraseSet(phrases.map(foldPhrase))
  const match = (target: TargetText): Finding[] => {
    const text = target.text
    if (set.empty || text.length === 0) return []
    // ASCII text, the common case, is read as folding would see it, without folding it.
    let matches = fastPath && isAsciiText(target) ? set.searchAscii(text) : null
    if (matches === null) {
      const folded = foldTarget(target)
      matches = unfold(folded, set.search(folded.text))
    }
    if (matches.length === 0) return []
    const index = new CodePointIndex(text)
    return matches.map((m) => index.finding('keyword', target, m.start, m.end))
  }
  return { match, pending: keywordsPending(set) }
}
