/**
 * OpenAI's moderation endpoint, `POST {base}/moderations` (OpenAI API reference, "Moderations":
 * `{"model", "input"}` in; `results[0]` with `flagged`, `categories` (booleans) and
 * `category_scores` out). Serves toxicity only; the score is the highest category score.
 */
import {
  type GuardVerdict,
  garbage,
  mapCodes,
  TOXICITY_CATEGORIES,
  type ToxicityCategory,
} from '../verdict.js'
import { type GuardFormat, judged } from './format.js'

/** The model asked when GUARD_<NAME>_MODEL is unset. */
export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest'

/** OpenAI's moderation categories mapped to Warden's; `illicit` and `illicit/violent` have no counterpart. */
export const OPENAI_MODERATION_CATEGORIES: Readonly<Record<string, ToxicityCategory>> = {
  hate: 'hate',
  'hate/threatening': 'hate',
  harassment: 'harassment',
  'harassment/threatening': 'harassment',
  sexual: 'sexual',
  'sexual/minors': 'sexual',
  violence: 'violence',
  'violence/graphic': 'violence',
  'self-harm': 'self_harm',
  'self-harm/intent': 'self_harm',
  'self-harm/instructions': 'self_harm',
}

export const openaiModeration: GuardFormat = {
  name: 'openai-moderation',
  abilities: () => ({
    harm: () => null,
    injection: 'OpenAI moderation scores harm categories only',
    policy: 'OpenAI moderation scores harm categories only',
  }),
  calls(request, options) {
    return [
      {
        path: '/moderations',
        body: { model: options.model ?? DEFAULT_MODERATION_MODEL, input: judged(request).content },
      },
    ]
  },
  read([answer]) {
    return readModeration(answer)
  },
}

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined

/** Reads `results[0]`; a missing result, flag or score map, or a score outside 0..1, is garbage. */
export function readModeration(answer: unknown): GuardVerdict {
  const result = record((record(answer)?.results as unknown[] | undefined)?.[0])
  const scores = record(result?.category_scores)
  const booleans = record(result?.categories) ?? {}
  if (!result || typeof result.flagged !== 'boolean' || !scores)
    throw garbage('guard answered something that is not a moderation result')
  const categoryScores: Partial<Record<ToxicityCategory, number>> = {}
  let worst = 0
  for (const [code, score] of Object.entries(scores)) {
    if (typeof score !== 'number' || !(score >= 0 && score <= 1))
      throw garbage('guard answered a category score outside 0..1')
    worst = Math.max(worst, score)
    const category = OPENAI_MODERATION_CATEGORIES[code]
    if (category) categoryScores[category] = Math.max(categoryScores[category] ?? 0, score)
  }
  const named = Object.entries(booleans)
    .filter(([, on]) => on === true)
    .map(([code]) => code)
  const { categories, unmapped } = mapCodes(named, (code) => OPENAI_MODERATION_CATEGORIES[code])
  return {
    score: worst,
    flagged: result.flagged,
    rawVerdict: result.flagged ? `flagged: ${named.join(', ')}` : 'not flagged',
    categories: TOXICITY_CATEGORIES.filter((c) => categories.includes(c)),
    unmapped,
    categoryScores,
  }
}
