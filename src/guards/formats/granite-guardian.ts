/**
 * IBM Granite Guardian 3.x behind an OpenAI-compatible chat server.
 *
 * From ibm-granite/granite-guardian `README.md` and the Ollama card in ibm-granite/gguf
 * `resources/ollama/granite3.3-guardian/README.md`: the risk judged is chosen through the chat
 * template's `guardian_config` (vLLM passes it as `chat_template_kwargs`; 3.1/3.2 read
 * `risk_name` and, for a risk of one's own, `risk_definition`; 3.3 reads `criteria_id` and
 * `custom_criteria`, so both spellings are sent) or, on Ollama, as the system message (`/set
 * system violence`). The answer is `Yes` (the risk is present) or `No` — 3.2 may add a
 * `<confidence>` line — and 3.3 writes `<score> yes </score>`, after `<think>…</think>` when
 * thinking. The score is P(yes) against P(no) at the answer's token when the server sends
 * log-probabilities, else 0 or 1.
 */
import {
  binaryProbability,
  type GuardRequest,
  type GuardVerdict,
  garbage,
  type ToxicityCategory,
} from '../verdict.js'
import {
  alternating,
  chatBody,
  type GuardFormat,
  JUDGES_ALL,
  readChat,
  type TokenLogprobs,
} from './format.js'

/** Granite's risks that are one of Warden's categories. */
export const GRANITE_RISK_CATEGORIES: Readonly<Record<string, ToxicityCategory>> = {
  social_bias: 'hate',
  violence: 'violence',
  profanity: 'profanity',
  sexual_content: 'sexual',
}

/** The custom policy's name in `guardian_config` (3.1/3.2 take any name with `risk_definition`). */
const CUSTOM_RISK = 'custom_policy'

/**
 * The risk asked for a request: `jailbreak` for an injection; for harm the one Granite risk of
 * a question limited to a single category that has one, else `harm` (everything harmful); the
 * written policy for a policy.
 */
export function graniteRisk(request: GuardRequest): string {
  if (request.asks === 'injection') return 'jailbreak'
  if (request.asks === 'policy') return CUSTOM_RISK
  const only = request.categories?.length === 1 ? request.categories[0] : undefined
  const risk = Object.entries(GRANITE_RISK_CATEGORIES).find(([, category]) => category === only)?.[0]
  return risk ?? 'harm'
}

export const graniteGuardian: GuardFormat = {
  name: 'granite-guardian',
  abilities: (options) => ({
    ...JUDGES_ALL,
    policy:
      options.guardianConfig === 'system'
        ? "a custom policy needs the chat template's guardian_config (GUARD_<NAME>_GUARDIAN_CONFIG=template); the system message only names a built-in risk"
        : null,
  }),
  calls(request, options) {
    const risk = graniteRisk(request)
    const turns = alternating(request.messages)
    if (options.guardianConfig === 'system')
      return [
        {
          path: '/chat/completions',
          body: chatBody(options, [{ role: 'system', content: risk }, ...turns], 64),
        },
      ]
    const guardianConfig =
      risk === CUSTOM_RISK
        ? {
            risk_name: CUSTOM_RISK,
            risk_definition: request.definition ?? '',
            custom_criteria: request.definition ?? '',
          }
        : { risk_name: risk, criteria_id: risk }
    return [
      {
        path: '/chat/completions',
        body: chatBody(options, turns, 64, { chat_template_kwargs: { guardian_config: guardianConfig } }),
      },
    ]
  },
  read([answer], request) {
    const { content, tokens } = readChat(answer)
    return readGranite(content, tokens, graniteRisk(request))
  },
}

/** Reads `Yes` / `No` (with an optional `<confidence>` line) or `<score> yes </score>`; anything else is garbage. */
export function readGranite(content: string, tokens: readonly TokenLogprobs[], risk: string): GuardVerdict {
  const answer = content.replace(/<think>[\s\S]*?<\/think>/g, '').trim()
  const tagged = /^<score>\s*(yes|no)\s*<\/score>$/i.exec(answer)
  const plain = /^(yes|no)\s*(?:\n\s*<confidence>\s*(?:high|low)\s*<\/confidence>)?$/i.exec(answer)
  const word = (tagged ?? plain)?.[1]?.toLowerCase()
  if (!word) throw garbage('guard answered neither "Yes" nor "No"')
  const flagged = word === 'yes'
  const probability = answerProbability(tokens, tagged !== null)
  const score = probability ?? (flagged ? 1 : 0)
  const category = GRANITE_RISK_CATEGORIES[risk]
  const categories = flagged && category ? [category] : []
  return {
    score,
    flagged,
    rawVerdict: answer,
    categories,
    unmapped: flagged && !category ? [risk] : [],
    categoryScores: category ? { [category]: score } : {},
  }
}

/** P(yes) at the answer's token: the first word token, or the first after `<score>`. */
function answerProbability(tokens: readonly TokenLogprobs[], tagged: boolean): number | undefined {
  let text = ''
  for (const token of tokens) {
    const inside = !tagged || /<score>\s*$/.test(text)
    const word = token.token.trim().toLowerCase()
    if (inside && (word === 'yes' || word === 'no')) return binaryProbability(token.top, ['yes'], ['no'])
    if (!tagged && word !== '') return undefined
    text += token.token
  }
  return undefined
}
