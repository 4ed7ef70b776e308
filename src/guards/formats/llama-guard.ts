/**
 * Llama Guard 3 and 4 behind an OpenAI-compatible chat server (vLLM, Ollama's `/v1`).
 *
 * From meta-llama/PurpleLlama `Llama-Guard3/8B/MODEL_CARD.md` and `Llama-Guard4/12B/MODEL_CARD.md`:
 * the conversation goes in as chat turns and the model's chat template wraps it in the task
 * prompt with the S1–S14 hazard categories; the model answers `safe`, or `unsafe` and on a
 * second line the violated codes separated by commas (`unsafe\nS1,S10`). The card derives a
 * score from the probability of the first generated token being `unsafe`; we read it from the
 * server's `top_logprobs` when it sends them, else the score is 0 or 1.
 */
import {
  binaryProbability,
  type GuardVerdict,
  garbage,
  mapCodes,
  type ToxicityCategory,
  uniformScores,
} from '../verdict.js'
import { alternating, chatBody, firstWordToken, type GuardFormat, readChat } from './format.js'

/** The MLCommons hazard codes of Llama Guard 3/4 mapped to Warden's categories; the rest are reported as they are. */
export const LLAMA_GUARD_CATEGORIES: Readonly<Record<string, ToxicityCategory>> = {
  S1: 'violence', // Violent Crimes
  S3: 'sexual', // Sex-Related Crimes
  S4: 'sexual', // Child Sexual Exploitation
  S9: 'violence', // Indiscriminate Weapons
  S10: 'hate', // Hate
  S11: 'self_harm', // Suicide & Self-Harm
  S12: 'sexual', // Sexual Content
}

/** Enough for `unsafe` and every one of the fourteen codes. */
const MAX_TOKENS = 48

export const llamaGuard: GuardFormat = {
  name: 'llama-guard',
  abilities: () => ({
    harm: () => null,
    injection:
      'Llama Guard judges content hazards, not prompt injection (its card points to Prompt Guard for that)',
    policy: 'Llama Guard judges its fixed hazard categories, not a custom policy',
  }),
  calls(request, options) {
    return [{ path: '/chat/completions', body: chatBody(options, alternating(request.messages), MAX_TOKENS) }]
  },
  read([answer]) {
    const { content, tokens } = readChat(answer)
    return readLlamaGuard(content, tokens.length > 0 ? firstWordToken(tokens)?.top : undefined)
  },
}

/** Reads `safe` / `unsafe\nS1,S10` (case and surrounding blank space aside); anything else is garbage. */
export function readLlamaGuard(content: string, first?: ReadonlyMap<string, number>): GuardVerdict {
  const lines = content
    .trim()
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '')
  const label = lines[0]?.toLowerCase()
  if (label !== 'safe' && label !== 'unsafe') throw garbage('guard answered neither "safe" nor "unsafe"')
  const flagged = label === 'unsafe'
  let codes: string[] = []
  if (flagged && lines[1] !== undefined) {
    codes = lines[1].split(',').map((code) => code.trim().toUpperCase())
    if (codes.some((code) => !/^S\d{1,2}$/.test(code)))
      throw garbage('guard answered "unsafe" with something that is not a list of S-codes')
  }
  if (lines.length > (flagged ? 2 : 1)) throw garbage('guard answered more than its verdict')
  const probability = first ? binaryProbability(first, ['unsafe', 'un'], ['safe']) : undefined
  const score = probability ?? (flagged ? 1 : 0)
  const { categories, unmapped } = mapCodes(codes, (code) => LLAMA_GUARD_CATEGORIES[code])
  return {
    score,
    flagged,
    rawVerdict: lines.join('\n'),
    categories,
    unmapped,
    categoryScores: uniformScores(categories, score),
  }
}
