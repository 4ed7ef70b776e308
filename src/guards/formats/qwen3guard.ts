/**
 * Qwen3Guard-Gen behind an OpenAI-compatible chat server (vLLM, SGLang, Ollama's `/v1`).
 *
 * From QwenLM/Qwen3Guard `README.md`: the conversation goes in as chat turns (the model's chat
 * template holds the safety policy); it answers `Safety: Safe|Unsafe|Controversial` and
 * `Categories: …` (`None` when safe), and for a judged response a third line `Refusal: Yes|No`.
 * `Jailbreak` is a category of prompts only. Controversial is "harmful in some applications, not
 * others": it scores CONTROVERSIAL_SCORE, so that the default threshold of 0.5 lets it pass (the
 * card's "loose" reading) and any threshold below 0.5 fails it (the "strict" one).
 */
import {
  type GuardVerdict,
  garbage,
  mapCodes,
  type TopLogprobs,
  type ToxicityCategory,
  uniformScores,
} from '../verdict.js'
import {
  alternating,
  chatBody,
  type GuardFormat,
  JUDGES_ALL,
  readChat,
  type TokenLogprobs,
} from './format.js'

/** The score of `Safety: Controversial`: between Safe (0) and Unsafe (1). */
export const CONTROVERSIAL_SCORE = 0.5

/**
 * Qwen3Guard's categories mapped to Warden's. `Unethical Acts` covers, by the card, hate speech,
 * offensive language, harassment and insults alike, so it names all three of those.
 */
export const QWEN3GUARD_CATEGORIES: Readonly<Record<string, ToxicityCategory | readonly ToxicityCategory[]>> =
  {
    Violent: 'violence',
    'Sexual Content or Sexual Acts': 'sexual',
    'Suicide & Self-Harm': 'self_harm',
    'Unethical Acts': ['hate', 'harassment', 'profanity'],
  }

const KNOWN = [
  'Violent',
  'Non-violent Illegal Acts',
  'Sexual Content or Sexual Acts',
  'PII',
  'Suicide & Self-Harm',
  'Unethical Acts',
  'Politically Sensitive Topics',
  'Copyright Violation',
  'Jailbreak',
]

const LEVEL_SCORE = { Safe: 0, Controversial: CONTROVERSIAL_SCORE, Unsafe: 1 } as const
type Level = keyof typeof LEVEL_SCORE

export const qwen3guard: GuardFormat = {
  name: 'qwen3guard',
  abilities: () => ({
    ...JUDGES_ALL,
    policy: 'Qwen3Guard judges its fixed safety categories, not a custom policy',
  }),
  calls(request, options) {
    return [{ path: '/chat/completions', body: chatBody(options, alternating(request.messages), 64) }]
  },
  read([answer], request) {
    const { content, tokens } = readChat(answer)
    const verdict = readQwen3Guard(content, tokens)
    if (request.asks !== 'injection') return verdict
    // A prompt_injection rule asks about jailbreaks only: Unsafe for violence is no injection.
    const jailbreak = verdict.unmapped.includes('Jailbreak')
    return { ...verdict, score: jailbreak ? verdict.score : 0, flagged: jailbreak && verdict.flagged }
  },
}

/** Reads a Qwen3Guard answer; without a `Safety:` line it is garbage. */
export function readQwen3Guard(content: string, tokens: readonly TokenLogprobs[] = []): GuardVerdict {
  const level = /Safety:\s*(Safe|Unsafe|Controversial)\b/.exec(content)?.[1] as Level | undefined
  if (!level) throw garbage('guard answered no "Safety: Safe|Unsafe|Controversial" line')
  const line = /Categories:\s*([^\n]*)/.exec(content)?.[1]?.trim()
  const codes: string[] = []
  if (line !== undefined && line !== 'None')
    for (const part of line.split(',')) {
      const code = part.trim()
      if (!KNOWN.includes(code)) throw garbage(`guard answered an unknown category "${code.slice(0, 60)}"`)
      codes.push(code)
    }
  const probability = levelProbability(tokens)
  const score = probability ?? LEVEL_SCORE[level]
  const { categories, unmapped } = mapCodes(codes, (code) => QWEN3GUARD_CATEGORIES[code])
  return {
    score,
    flagged: level === 'Unsafe',
    rawVerdict: content.trim(),
    categories,
    unmapped,
    categoryScores: uniformScores(categories, score),
  }
}

/**
 * P(Unsafe) + CONTROVERSIAL_SCORE × P(Controversial), the three levels' probabilities normalised,
 * at the position of the level's first token after `Safety:` (` Unsafe`, ` Safe`, ` Contro`…). Undefined when
 * the server sent no log-probabilities or that position lists none of the levels.
 */
function levelProbability(tokens: readonly TokenLogprobs[]): number | undefined {
  // The level's token is the first word token after the text `Safety:`.
  let text = ''
  let at = -1
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]?.token ?? ''
    if (/Safety:\s*$/.test(text) && token.trim() !== '') {
      at = i
      break
    }
    text += token
  }
  const top: TopLogprobs | undefined = tokens[at]?.top
  if (!top) return undefined
  const mass = { Safe: 0, Controversial: 0, Unsafe: 0 }
  for (const [token, logprob] of top) {
    const which = level(token)
    if (which && Number.isFinite(logprob)) mass[which] += Math.exp(logprob)
  }
  const total = mass.Safe + mass.Controversial + mass.Unsafe
  if (total === 0) return undefined
  return (mass.Unsafe + CONTROVERSIAL_SCORE * mass.Controversial) / total
}

function level(token: string): Level | undefined {
  const word = token.trim().toLowerCase()
  if (word.length < 2) return undefined
  if ('unsafe'.startsWith(word) && word.startsWith('un')) return 'Unsafe'
  if ('safe'.startsWith(word) && word.startsWith('sa')) return 'Safe'
  if ('controversial'.startsWith(word) && word.startsWith('con')) return 'Controversial'
  return undefined
}
