import { keywordsDetector } from '../detectors/index.js'
import { broken, detector, type RuleTypeModule, warmUpRule } from './rule-type.js'

/**
 * Building a keywords rule's automaton costs about this much per character of its phrases, and
 * per UTF-8 byte past the first of a character (which folding may expand 18-fold): 1,000 phrases
 * of 256 ASCII characters took 194 ms here, the same with a fifth of U+FDFA 673 ms.
 */
const NS_PER_PHRASE_CHARACTER = 800
const NS_PER_PHRASE_WIDE_BYTE = 5_000

/** keywords: the flagged phrases as whole words, after NFKC and case folding. */
export const keywordsRule: RuleTypeModule = {
  type: 'keywords',
  scoring: null,
  detectorChoice: false,
  guardChoice: false,
  redacts: true,
  masks: true,
  allows: 'findings',
  form: { flagged: 'phrases', about: 'Passes when none of the phrases occurs (whole words, any case).' },
  validate(rule, { at }) {
    if (rule.flagged !== null) return []
    return [{ pointer: `${at}/flagged`, detail: 'is required for a keywords rule: the phrases to flag' }]
  },
  compile(rule) {
    if (rule.flagged === null) return broken('the keywords rule has no phrases')
    const { match, pending } = keywordsDetector(rule.flagged)
    return detector(match, pending)
  },
  cost: {
    // 4 ns a character; folding text beyond ASCII costs more (U+FDFA folds to 18 characters).
    nsPerCharacter: 5,
    nsPerWideByte: 500,
    compileMs(rule) {
      let ns = 0
      for (const phrase of rule.flagged ?? [])
        ns +=
          phrase.length * NS_PER_PHRASE_CHARACTER +
          (Buffer.byteLength(phrase, 'utf8') - phrase.length) * NS_PER_PHRASE_WIDE_BYTE
      return ns / 1e6
    },
  },
  warmUp: warmUpRule('keywords', { flagged: ['refund guarantee'] }),
}
