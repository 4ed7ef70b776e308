/**
 * The deterministic rule engines (pii, keywords, regex, length) and the offline heuristics
 * (toxicity, prompt_injection). Pure: each factory compiles its rule once (patterns, automata,
 * lexicons) and returns a function of one text; nothing reads the network, a store or globals.
 */
export { injectionHeuristic } from './injection.js'
export { keywordsMatcher } from './keywords.js'
export { lengthMatcher } from './length.js'
export { PII_KINDS, type PiiKind, piiMatcher } from './pii.js'
export { redactText } from './redact.js'
export { regexMatcher } from './regex.js'
export { TOXICITY_CATEGORIES, type ToxicityCategory, toxicityHeuristic } from './toxicity.js'
export type { HeuristicScore, TextMatcher } from './types.js'
