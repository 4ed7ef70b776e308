import { toolCallName } from '../rules/arguments.js'
import { type ConversationInput, toolCallText } from '../rules/conversation.js'
import { RULE_TYPE_MODULES } from '../rules/rule-types/registry.js'
import type { CostedRule } from '../rules/rule-types/rule-type.js'
import type { EvaluationPool } from './pool.js'

/**
 * What an evaluation may cost on the thread that runs it, estimated before it runs, to choose
 * between the event loop and the evaluation pool (docs/evaluation.md, "Large evaluations"). The
 * estimate is a worst case: the nanoseconds a character of text costs each rule type on the
 * text that costs it most (bench/README.md, "Large evaluations off the loop"), not on typical
 * text, so that no evaluation left on the event loop can hold it much longer than estimated.
 * Each rule type's figures are in its module (src/rules/rule-types/, `cost`): per character,
 * per UTF-8 byte beyond the first of a character for the types that fold text (Unicode NFKC and
 * case folding: U+FDFA, one character, folds to 18), and what checking and compiling a rule
 * costs.
 */

/**
 * Compile work estimated at this or more is not done on the event loop while there is an
 * evaluation pool: a policy revision that costs it is compiled only in a worker, and patterns
 * that cost it to check are checked in one.
 */
export const COMPILE_BUDGET_MS = 20

/**
 * How much text an evaluation reads: its characters (as EVALUATION_MAX_WORK counts them), the
 * UTF-8 bytes beyond the first of each (`wide`: 0 for ASCII text), which folding multiplies, and
 * its triggers (`triggers()`, counted when asked): the characters a detector's costly
 * confirmation starts from (see TRIGGER).
 */
export interface TextSize {
  characters: number
  wide: number
  triggers(): number
}

/**
 * What a pii candidate needs, and what makes the pii rule costly: a digit (card, phone, IBAN,
 * SSN, IP address, identity numbers), an `@` (an e-mail, credentials in a URL) or a `:` (IPv6,
 * MAC addresses, URLs), in ASCII or in a form that Unicode NFKC folds to one (full-width,
 * superscript, circled digits). Text without them costs the pii rule a few tens of nanoseconds a
 * character; each of them, up to tens of microseconds (bench/evaluation-cost.mjs). An `@` counts
 * three times: an e-mail's confirmation reads the whole address around it, where a digit's is
 * shared by the digits of its number. Two candidates may hold none of them, and count too: a
 * hyphen between letters (a MAC address written AA-BB-CC-DD-EE-FF) and a run of sixteen capitals
 * and digits (a codice fiscale whose digits omocodia turned into letters).
 */
const TRIGGER = /[\p{N}\uFF1A\uFE55\uFE13]/u
const AT = /[\uFF20\uFE6B]/u
const AT_WEIGHT = 3
const CAPITALS_RUN = 16

const isAsciiLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122)

/** The triggers of `text`, `@` weighted (see TRIGGER). */
function countTriggers(text: string): number {
  let n = 0
  let capitals = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 128) {
      if ((c >= 48 && c <= 58) || c === 64) n += c === 64 ? AT_WEIGHT : 1
      else if (c === 45 && isAsciiLetter(text.charCodeAt(i - 1)) && isAsciiLetter(text.charCodeAt(i + 1))) n++
      if ((c >= 65 && c <= 90) || (c >= 48 && c <= 57)) {
        if (++capitals === CAPITALS_RUN) n++
      } else capitals = 0
    } else {
      capitals = 0
      const char = text[i] as string
      if (AT.test(char)) n += AT_WEIGHT
      else if (TRIGGER.test(char)) n++
    }
  }
  return n
}

/** The size of a conversation's messages (their content and their tool calls' arguments) and context. */
export function textSize(conversation: ConversationInput): TextSize {
  let characters = 0
  let wide = 0
  const texts: string[] = []
  const add = (text: string) => {
    characters += text.length
    wide += Buffer.byteLength(text, 'utf8') - text.length
    texts.push(text)
  }
  for (const m of conversation.messages) {
    if (typeof m.content === 'string') add(m.content)
    else
      for (const part of m.content) {
        add(part.text)
        characters++
      }
    // Tool calls (their names and arguments) are read by the assistant and output targets (docs/agents.md).
    for (const call of m.tool_calls ?? []) {
      const text = toolCallText(call)
      if (text !== null) add(text)
      const name = toolCallName(call)
      if (name !== null) add(name)
    }
  }
  for (const d of conversation.context ?? []) add(d)
  let triggers: number | null = null
  return {
    characters,
    wide,
    triggers() {
      if (triggers === null) {
        triggers = 0
        for (const text of texts) triggers += countTriggers(text)
      }
      return triggers
    },
  }
}

/**
 * The estimated milliseconds of checking rules as a create does: compiling each pattern in RE2
 * (regex-cost.ts), from a few microseconds to hundreds of milliseconds.
 */
export function checkMs(rules: Iterable<CostedRule>): number {
  let ms = 0
  for (const rule of rules) ms += RULE_TYPE_MODULES[rule.type].cost.checkMs?.(rule) ?? 0
  return ms
}

/**
 * The estimated milliseconds of compiling rules for evaluation: each pattern's RE2 program, each
 * keywords rule's automaton of its phrases.
 */
export function compileMs(rules: Iterable<CostedRule>): number {
  let ms = 0
  for (const rule of rules) ms += RULE_TYPE_MODULES[rule.type].cost.compileMs?.(rule) ?? 0
  return ms
}

/**
 * The estimated worst-case milliseconds of an evaluation of text of `size` by `rules`, plus
 * checking and compiling `draftRules` (drafts are checked and compiled for each evaluation). A
 * rule an external scorer decides (a toxicity or prompt_injection rule the judge scores:
 * `detector: judge`, or none when a judge is configured) costs next to nothing here: the
 * judge's time is spent waiting, not computing.
 */
export function estimatedMs(
  size: TextSize,
  rules: Iterable<CostedRule>,
  draftRules: Iterable<CostedRule>,
  judge: boolean,
): number {
  let ns = 0
  for (const rule of rules) {
    const cost = RULE_TYPE_MODULES[rule.type].cost
    ns += cost.external?.(rule, judge)
      ? size.characters
      : size.characters * cost.nsPerCharacter +
        size.wide * cost.nsPerWideByte +
        (cost.nsPerTrigger ? size.triggers() * cost.nsPerTrigger : 0)
  }
  const drafts = [...draftRules]
  ns += (checkMs(drafts) + compileMs(drafts)) * 1e6
  return ns / 1e6
}

/** What decides where an evaluation runs. */
export interface Work {
  /** Something it evaluates is compiled only in the pool (a costly revision, or drafts to check there). */
  poolOnly: boolean
  size: TextSize
  rules: Iterable<CostedRule>
  /** Rules of drafts, checked and compiled for this evaluation. */
  draftRules: Iterable<CostedRule>
  /** A judge is configured. */
  judge: boolean
}

/**
 * Whether an evaluation runs in the evaluation pool rather than on the event loop: there is a
 * pool, and something it evaluates is compiled only there, or its estimated worst case reaches
 * `minMs` (EVALUATION_POOL_MIN_MS). The one rule for evaluations, their drafts and test runs.
 */
export function runsInPool(
  pool: EvaluationPool | null | undefined,
  minMs: number,
  work: Work,
): pool is EvaluationPool {
  if (!pool) return false
  return work.poolOnly || estimatedMs(work.size, work.rules, work.draftRules, work.judge) >= minMs
}
