/**
 * The deterministic rule engines (pii, keywords, regex, length) and the toxicity lexicon (the
 * categories the toxicity model has no head for; the models themselves are in `classifier/`). Pure: each factory compiles its rule once (patterns, automata,
 * lexicons) and returns a function of one text; nothing reads the network, a store or globals.
 */
export { keywordsDetector, keywordsMatcher } from './keywords.js'
export { lengthMatcher } from './length.js'
export { PII_KINDS, type PiiKind, piiMatcher } from './pii.js'
export { redactText } from './redact.js'
export { regexMatcher } from './regex.js'
export { TOXICITY_CATEGORIES, type ToxicityCategory, toxicityHeuristic } from './toxicity.js'
export type { TextMatcher, TextScore } from './types.js'
