/**
 * A sequence classifier behind Hugging Face text-embeddings-inference (TEI): `POST {base}/predict`.
 *
 * From huggingface/text-embeddings-inference `docs/openapi.json` (PredictRequest, PredictResponse)
 * and `docs/source/en/quick_tour.md`: `{"inputs": "text"}` answers `[{"label", "score"}, …]`, and a
 * batch `{"inputs": [["a"], ["b"]]}` answers one such list per input. Without `raw_scores` TEI
 * applies a softmax over the labels (a sigmoid for a single-label model) — also for multi-label
 * models, so their scores compete. A window's score is the sum of its positive labels'
 * probabilities (GUARD_<NAME>_POSITIVE_LABELS, e.g. `MALICIOUS` for Llama Prompt Guard 2,
 * `INJECTION,JAILBREAK` for Prompt Guard 1); the text's is its worst window's.
 *
 * Long texts: DeBERTa-class classifiers read 512 tokens (Llama Prompt Guard 2's card: "split
 * prompts into segments and scan them in parallel"). Tokens are not counted here: a text is cut
 * into windows of at most GUARD_<NAME>_WINDOW_CHARS characters (default 1,500: English runs near
 * four characters a token, so 512 tokens hold ~2,000; the margin covers denser text), at word
 * boundaries where one lies in the window's last fifth, each overlapping the previous by a tenth
 * so that an instruction cut in two is read whole in one of them. `truncate: true` keeps a window
 * that is still too long from failing the call: TEI drops its tail.
 */
import {
  clamp01,
  type GuardVerdict,
  garbage,
  TOXICITY_CATEGORIES,
  type ToxicityCategory,
} from '../verdict.js'
import { type GuardFormat, JUDGES_ALL, judged } from './format.js'

/** Labels counted positive when GUARD_<NAME>_POSITIVE_LABELS is unset. */
export const DEFAULT_POSITIVE_LABELS = ['MALICIOUS', 'INJECTION', 'JAILBREAK', 'UNSAFE', 'TOXIC'] as const

/** Classifier labels that name one of Warden's categories (toxic-bert's and the categories' own names). */
const LABEL_CATEGORIES: Readonly<Record<string, ToxicityCategory>> = {
  hate: 'hate',
  identity_hate: 'hate',
  harassment: 'harassment',
  insult: 'harassment',
  sexual: 'sexual',
  sexual_explicit: 'sexual',
  violence: 'violence',
  threat: 'violence',
  self_harm: 'self_harm',
  profanity: 'profanity',
  obscene: 'profanity',
}

/** The windows a text is scored in. */
export function windows(text: string, size: number): string[] {
  if (text.length <= size) return [text]
  const overlap = Math.floor(size / 10)
  const out: string[] = []
  let start = 0
  while (start < text.length) {
    let end = Math.min(text.length, start + size)
    if (end < text.length) {
      const space = text.lastIndexOf(' ', end)
      if (space > start + Math.floor(size * 0.8)) end = space
    }
    out.push(text.slice(start, end))
    if (end >= text.length) break
    start = Math.max(start + 1, end - overlap)
  }
  return out
}

export const textClassification: GuardFormat = {
  name: 'text-classification',
  abilities: () => ({ ...JUDGES_ALL, policy: 'a classifier has fixed labels, not a custom policy' }),
  calls(request, options) {
    const parts = windows(judged(request).content, options.windowChars)
    return [
      {
        path: '/predict',
        body: {
          inputs: parts.length === 1 ? parts[0] : parts.map((part) => [part]),
          raw_scores: false,
          truncate: true,
        },
      },
    ]
  },
  read([answer], request, options) {
    const count = windows(judged(request).content, options.windowChars).length
    return readPredictions(answer, count, options.positiveLabels)
  },
}

interface Prediction {
  label: string
  score: number
}

function predictions(list: unknown): Prediction[] {
  if (!Array.isArray(list) || list.length === 0)
    throw garbage('guard answered something that is not a list of labels')
  return list.map((item) => {
    const p = item as Partial<Prediction> | null
    if (typeof p?.label !== 'string' || typeof p.score !== 'number' || !(p.score >= 0 && p.score <= 1))
      throw garbage('guard answered a label without a score in 0..1')
    return { label: p.label, score: p.score }
  })
}

/** Reads TEI's answer for `count` windows: one list of labels, or one per window. */
export function readPredictions(answer: unknown, count: number, positive: readonly string[]): GuardVerdict {
  if (!Array.isArray(answer)) throw garbage('guard answered something that is not a list of labels')
  const perWindow = count === 1 && !Array.isArray(answer[0]) ? [predictions(answer)] : answer.map(predictions)
  if (perWindow.length !== count) throw garbage('guard answered a different number of windows')
  const wanted = positive.map((label) => label.toLowerCase())
  let worst = 0
  let worstWindow: Prediction[] = perWindow[0] ?? []
  const categoryScores: Partial<Record<ToxicityCategory, number>> = {}
  const unmapped = new Set<string>()
  perWindow.forEach((labels, i) => {
    let score = 0
    for (const { label, score: p } of labels) {
      if (!wanted.includes(label.toLowerCase())) continue
      score += p
      const category = LABEL_CATEGORIES[label.toLowerCase()]
      if (category) categoryScores[category] = Math.max(categoryScores[category] ?? 0, p)
      else if (p > 0.5) unmapped.add(label)
    }
    score = clamp01(score)
    if (i === 0 || score > worst) {
      worst = score
      worstWindow = labels
    }
  })
  const top = [...worstWindow].sort((a, b) => b.score - a.score)[0]
  return {
    score: worst,
    flagged: worst > 0.5,
    rawVerdict: top ? `${top.label} ${top.score.toFixed(4)}` : '',
    categories: TOXICITY_CATEGORIES.filter((c) => (categoryScores[c] ?? 0) > 0.5),
    unmapped: [...unmapped],
    categoryScores,
  }
}
