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
 * Text beyond ASCII costs the rules that fold it more: NS_PER_WIDE_BYTE.
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
 * What folding adds, per UTF-8 byte beyond the first of each character, for the rules that read
 * folded text (Unicode NFKC and case folding): U+FDFA, one character, folds to 18, and 330,000 of
 * them cost a keywords rule 260 ms, a toxicity rule 660 ms and a prompt_injection rule 700 ms,
 * where as many ASCII characters cost 1, 35 and 12 ms. Counting UTF-8 bytes is native and costs
 * next to nothing; it over-counts three-byte characters that fold to themselves, which is the
 * safe side of an estimate.
 */
const NS_PER_WIDE_BYTE: Readonly<Partial<Record<RuleType, number>>> = {
  keywords: 500,
  toxicity: 1_250,
  prompt_injection: 1_250,
}

/**
 * Compiling a draft's rules costs about this many nanoseconds per character of its phrases,
 * patterns and definition (the keyword automaton's build: 1,280 rules of 1 MB of phrases in
 * 0.7 s; RE2 patterns 0.2 µs a character).
 */
const NS_PER_DRAFT_CHARACTER = 800

/**
 * How much text an evaluation reads: its characters (as EVALUATION_MAX_WORK counts them), and
 * the UTF-8 bytes beyond the first of each (`wide`: 0 for ASCII text), which folding multiplies.
 */
export interface TextSize {
  characters: number
  wide: number
}

/** The size of a conversation's messages and context. */
export function textSize(conversation: ConversationInput): TextSize {
  let characters = 0
  let wide = 0
  const add = (text: string) => {
    characters += text.length
    wide += Buffer.byteLength(text, 'utf8') - text.length
  }
  for (const m of conversation.messages) {
    if (typeof m.content === 'string') add(m.content)
    else
      for (const part of m.content) {
        add(part.text)
        characters++
      }
  }
  for (const d of conversation.context ?? []) add(d)
  return { characters, wide }
}

/** A rule as the estimate reads it. */
type CostedRule = Pick<PolicyRule, 'type' | 'detector' | 'value' | 'flagged'>

/**
 * The estimated worst-case milliseconds of an evaluation of text of `size` by `rules`, plus
 * compiling `draftRules` (drafts are compiled for each evaluation). A toxicity or
 * prompt_injection rule the judge decides (`detector: judge`, or none when a judge is configured)
 * costs nothing here: the judge's time is spent waiting, not computing.
 */
export function estimatedMs(
  size: TextSize,
  rules: Iterable<CostedRule>,
  draftRules: Iterable<CostedRule>,
  judge: boolean,
): number {
  let ns = 0
  for (const rule of rules) {
    const judged =
      (rule.type === 'toxicity' || rule.type === 'prompt_injection') &&
      (rule.detector === 'judge' || ((rule.detector ?? null) === null && judge))
    ns +=
      size.characters * (judged ? 1 : NS_PER_CHARACTER[rule.type]) +
      (judged ? 0 : size.wide * (NS_PER_WIDE_BYTE[rule.type] ?? 0))
  }
  for (const rule of draftRules) {
    let size = rule.value?.length ?? 0
    for (const phrase of rule.flagged ?? []) size += phrase.length
    ns += size * NS_PER_DRAFT_CHARACTER
  }
  return ns / 1e6
}
