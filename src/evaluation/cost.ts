import type { ConversationInput } from '../rules/conversation.js'
import { regexCompileMs } from '../rules/detectors/regex-cost.js'
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
 * Building a keywords rule's automaton costs about this much per character of its phrases, and
 * per UTF-8 byte past the first of a character (which folding may expand 18-fold): 1,000 phrases
 * of 256 ASCII characters took 194 ms here, the same with a fifth of U+FDFA 673 ms.
 */
const NS_PER_PHRASE_CHARACTER = 800
const NS_PER_PHRASE_WIDE_BYTE = 5_000

/**
 * Compile work estimated at this or more is not done on the event loop while there is an
 * evaluation pool: a policy revision that costs it is compiled only in a worker, and patterns
 * that cost it to check are checked in one.
 */
export const COMPILE_BUDGET_MS = 20

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
 * The estimated milliseconds of checking rules as a create does: compiling each pattern in RE2
 * (regex-cost.ts), from a few microseconds to hundreds of milliseconds.
 */
export function checkMs(rules: Iterable<CostedRule>): number {
  let ms = 0
  for (const rule of rules) if (rule.type === 'regex' && rule.value) ms += regexCompileMs(rule.value)
  return ms
}

/**
 * The estimated milliseconds of compiling rules for evaluation: each pattern's RE2 program, each
 * keywords rule's automaton of its phrases.
 */
export function compileMs(rules: Iterable<CostedRule>): number {
  let ns = 0
  for (const rule of rules) {
    if (rule.type === 'regex' && rule.value) ns += regexCompileMs(rule.value) * 1e6
    if (rule.type === 'keywords')
      for (const phrase of rule.flagged ?? [])
        ns +=
          phrase.length * NS_PER_PHRASE_CHARACTER +
          (Buffer.byteLength(phrase, 'utf8') - phrase.length) * NS_PER_PHRASE_WIDE_BYTE
  }
  return ns / 1e6
}

/**
 * The estimated worst-case milliseconds of an evaluation of text of `size` by `rules`, plus
 * checking and compiling `draftRules` (drafts are checked and compiled for each evaluation). A toxicity or
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
  const drafts = [...draftRules]
  ns += (checkMs(drafts) + compileMs(drafts)) * 1e6
  return ns / 1e6
}
