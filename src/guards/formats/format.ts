/**
 * The shape of a guard format, and the reading of OpenAI-compatible answers that the chat-model
 * formats share. A format is pure: it builds the HTTP calls that ask one question and reads
 * their parsed JSON answers into a GuardVerdict, or throws a GuardAnswerError.
 */
import {
  GuardAnswerError,
  type GuardRequest,
  type GuardVerdict,
  garbage,
  type TopLogprobs,
  type ToxicityCategory,
} from '../verdict.js'

export const GUARD_FORMATS = [
  'llama-guard',
  'granite-guardian',
  'shieldgemma',
  'qwen3guard',
  'openai-moderation',
  'text-classification',
] as const
export type GuardFormatName = (typeof GUARD_FORMATS)[number]

/** What a format reads of its detector's configuration. */
export interface GuardFormatOptions {
  /** The model name sent (null where the server serves one model and takes none: TEI). */
  model: string | null
  /** Ask OpenAI-compatible servers for `logprobs` (GUARD_<NAME>_LOGPROBS, default on). */
  logprobs: boolean
  /** text-classification: the labels whose probability is the score, compared case-insensitively. */
  positiveLabels: readonly string[]
  /** text-classification: the longest window sent, in characters. */
  windowChars: number
  /** granite-guardian: how the risk is chosen: the chat template's `guardian_config` (vLLM) or the system message (Ollama). */
  guardianConfig: 'template' | 'system'
}

/** One HTTP call: POSTed as JSON to `{baseUrl}{path}`. */
export interface GuardCall {
  path: string
  body: Record<string, unknown>
}

/**
 * What a format's model judges under its options, said without naming rule types: each rule
 * type that may name a guard reads what it needs (`guardServes`, src/rules/rule-types/). For
 * each, null when the model judges it, else why not, in one line.
 */
export interface GuardAbilities {
  /** Harm in Warden's toxicity `categories` (a rule's `flagged`; null: all of them). */
  harm(categories: readonly ToxicityCategory[] | null): string | null
  /** Prompt injection and jailbreak attempts. */
  readonly injection: string | null
  /** A policy the operator wrote in words (a custom rule's definition). */
  readonly policy: string | null
}

/** A model that judges harm in every category, injection and a written policy. */
export const JUDGES_ALL: GuardAbilities = { harm: () => null, injection: null, policy: null }

export interface GuardFormat {
  readonly name: GuardFormatName
  /** What the format's model judges under `options`. */
  abilities(options: GuardFormatOptions): GuardAbilities
  /** The calls that ask `request` (one or more, sent at once). */
  calls(request: GuardRequest, options: GuardFormatOptions): GuardCall[]
  /** Reads the answers (parsed JSON, in the order of `calls`) into a verdict; throws GuardAnswerError. */
  read(answers: readonly unknown[], request: GuardRequest, options: GuardFormatOptions): GuardVerdict
}

/** How many alternatives per position are asked for (20 is the most OpenAI and vLLM allow). */
export const TOP_LOGPROBS = 5

/** An OpenAI-compatible Chat Completions request for a guard: greedy, short, log-probabilities when configured. */
export function chatBody(
  options: GuardFormatOptions,
  messages: readonly { role: string; content: string }[],
  maxTokens: number,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    ...(options.model ? { model: options.model } : {}),
    messages,
    temperature: 0,
    max_tokens: maxTokens,
    ...(options.logprobs ? { logprobs: true, top_logprobs: TOP_LOGPROBS } : {}),
    ...extra,
  }
}

/** One generated token and the alternatives the server listed for its position. */
export interface TokenLogprobs {
  token: string
  logprob: number
  top: TopLogprobs
}

/** The text of a chat completion and its tokens' log-probabilities (empty when the server sent none). */
export interface ChatAnswer {
  content: string
  tokens: TokenLogprobs[]
}

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined

/**
 * `choices[0].message.content` and `choices[0].logprobs.content` of a Chat Completions answer. A
 * refusal (`message.refusal`, or `finish_reason` `content_filter`) is a GuardAnswerError
 * `refused`; anything not shaped like a completion is `garbage`.
 */
export function readChat(answer: unknown): ChatAnswer {
  const choice = record((record(answer)?.choices as unknown[] | undefined)?.[0])
  const message = record(choice?.message)
  if (!choice || !message) throw garbage('guard answered something that is not a chat completion')
  if (typeof message.refusal === 'string' && message.refusal !== '')
    throw new GuardAnswerError('refused', 'guard refused to answer')
  if (choice.finish_reason === 'content_filter')
    throw new GuardAnswerError('refused', "guard's server filtered the answer")
  if (typeof message.content !== 'string') throw garbage('guard answered a chat completion without content')
  const tokens: TokenLogprobs[] = []
  const content = record(choice.logprobs)?.content
  if (Array.isArray(content))
    for (const item of content) {
      const entry = record(item)
      if (!entry || typeof entry.token !== 'string' || typeof entry.logprob !== 'number')
        throw garbage('guard answered log-probabilities that are not OpenAI-shaped')
      const top = new Map<string, number>()
      if (Array.isArray(entry.top_logprobs))
        for (const alt of entry.top_logprobs) {
          const a = record(alt)
          if (a && typeof a.token === 'string' && typeof a.logprob === 'number' && !top.has(a.token))
            top.set(a.token, a.logprob)
        }
      if (!top.has(entry.token)) top.set(entry.token, entry.logprob)
      tokens.push({ token: entry.token, logprob: entry.logprob, top })
    }
  return { content: message.content, tokens }
}

/** The first generated token that is not whitespace (servers may emit a leading newline or space token). */
export function firstWordToken(tokens: readonly TokenLogprobs[]): TokenLogprobs | undefined {
  return tokens.find((t) => t.token.trim() !== '')
}

/**
 * The chat turns a guard's chat template accepts: user and assistant strictly alternating,
 * beginning with a user turn (Llama Guard's and Granite Guardian's templates raise an error
 * otherwise). Consecutive turns of one role are joined with a blank line; a conversation that
 * begins with the assistant gets that turn judged as it is, after an empty user turn.
 */
export function alternating(
  messages: GuardRequest['messages'],
): { role: 'user' | 'assistant'; content: string }[] {
  const turns: { role: 'user' | 'assistant'; content: string }[] = []
  for (const message of messages) {
    const last = turns[turns.length - 1]
    if (last && last.role === message.role) last.content = `${last.content}\n\n${message.content}`
    else turns.push({ role: message.role, content: message.content })
  }
  if (turns[0]?.role === 'assistant') turns.unshift({ role: 'user', content: '' })
  return turns
}

/** The last message: the one judged. */
export function judged(request: GuardRequest): { role: 'user' | 'assistant'; content: string } {
  const last = request.messages[request.messages.length - 1]
  if (!last) throw new TypeError('a guard request needs at least one message')
  return last
}

/** The user prompt before the judged assistant message (empty when there is none). */
export function promptBefore(request: GuardRequest): string {
  for (let i = request.messages.length - 2; i >= 0; i--) {
    const message = request.messages[i]
    if (message?.role === 'user') return message.content
  }
  return ''
}
