import type { ConversationInput } from '../rules/conversation.js'
import type { PolicyRule, RuleType } from '../schemas/policies.js'

/**
 * What an evaluation may cost on the thread that runs it, estimated before it runs, to choose
 * between the event loop and the evaluation pool (docs/evaluation.md, "Large evaluations"). The
 * estimate is a worst case: the nanoseconds a character of text costs each rule type on the
 * text that costs it most (bench/README.md, "Large evaluations off the loop"), not on typical
 * text, so that no evaluation left on the event loop can hold it much longer than estimated.
 */

/** The default of EVALUATION_POOL_MIN_MS: an evaluation estimated at this or more runs in the pool. */
export const DEFAULT_POOL_MIN_MS = 40

/**
 * Worst measured nanoseconds per character per rule, by type (2 cores, idle):
 * - pii: distinct phone numbers back to back, each confirmed by libphonenumber (7.7 µs a character;
 *   typical text 35 ns);
 * - regex: a pattern that matches at every character, each match a finding (1.3 µs; typical 7 ns);
 * - toxicity: every category asked for (180 ns; without categories 28 ns); prompt_injection 80 ns;
 * - keywords 4 ns; length, and rules the judge decides, next to nothing here.
 */
const NS_PER_CHARACTER: Readonly<Record<RuleType, number>> = {
  pii: 8_000,
  regex: 1_300,
  toxicity: 200,
  prompt_injection: 100,
  keywords: 5,
  length: 1,
  factuality: 1,
  relevance: 1,
  custom: 1,
}

/**
 * Compiling a draft's rules costs about this many nanoseconds per character of its phrases,
 * patterns and definition (the keyword automaton's build: 1,280 rules of 1 MB of phrases in
 * 0.7 s; RE2 patterns 0.2 µs a character).
 */
const NS_PER_DRAFT_CHARACTER = 800

/** The characters of a conversation's messages and context, as EVALUATION_MAX_WORK counts them. */
export function countCharacters(conversation: ConversationInput): number {
  let characters = 0
  for (const m of conversation.messages)
    characters +=
      typeof m.content === 'string' ? m.content.length : m.content.reduce((n, p) => n + p.text.length + 1, 0)
  for (const d of conversation.context ?? []) characters += d.length
  return characters
}

/** A rule as the estimate reads it. */
type CostedRule = Pick<PolicyRule, 'type' | 'detector' | 'value' | 'flagged'>

/**
 * The estimated worst-case milliseconds of an evaluation of `characters` characters by `rules`,
 * plus compiling `draftRules` (drafts are compiled for each evaluation). A toxicity or
 * prompt_injection rule the judge decides (`detector: judge`, or none when a judge is configured)
 * costs nothing here: the judge's time is spent waiting, not computing.
 */
export function estimatedMs(
  characters: number,
  rules: Iterable<CostedRule>,
  draftRules: Iterable<CostedRule>,
  judge: boolean,
): number {
  let ns = 0
  for (const rule of rules) {
    const judged =
      (rule.type === 'toxicity' || rule.type === 'prompt_injection') &&
      (rule.detector === 'judge' || ((rule.detector ?? null) === null && judge))
    ns += characters * (judged ? 1 : NS_PER_CHARACTER[rule.type])
  }
  for (const rule of draftRules) {
    let size = rule.value?.length ?? 0
    for (const phrase of rule.flagged ?? []) size += phrase.length
    ns += size * NS_PER_DRAFT_CHARACTER
  }
  return ns / 1e6
}
