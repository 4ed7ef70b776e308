import { LRUCache } from 'lru-cache'
import type { FindingKind, TargetText } from '../../types.js'
import { CodePointIndex } from '../code-points.js'
import { foldTarget, originalEnd, originalStart } from '../fold.js'
import type { TextScore } from '../types.js'
import { type Classifier, DOCUMENT_HEAD, type Evidence, type Scored } from './linear.js'

/**
 * The offline classifiers as rule scorers (`method` model): a calibrated probability per text
 * and a reason with the score; when the score is over the rule's threshold, the reason also
 * names the phrases that weighed most, and each is a finding (the spans the console
 * highlights). Attribution costs about as much as scoring, so a passing text skips it.
 */
export type ModelScorer = (target: TargetText, threshold: number) => TextScore

function round(p: number): number {
  return Math.round(p * 1000) / 1000
}

/** The phrases that weighed most, quoted, each cut to 40 characters. */
function quoted(scored: Scored, evidence: readonly Evidence[]): string {
  return evidence
    .map((e) => {
      const phrase = scored.prepared.folded.slice(e.start, e.end).trim()
      return JSON.stringify(phrase.length > 40 ? `${phrase.slice(0, 40)}…` : phrase)
    })
    .join(', ')
}

function findings(kind: FindingKind, target: TargetText, scored: Scored, evidence: readonly Evidence[]) {
  const source = scored.prepared.source
  const index = new CodePointIndex(target.text)
  return evidence
    .map((e) => ({ start: originalStart(source, e.start), end: originalEnd(source, e.end - 1) }))
    .sort((a, b) => a.start - b.start)
    .map((span) => index.finding(kind, target, span.start, span.end))
}

/** Names the encodings a text hid words in, for the reason. */
function decodedNote(scored: Scored): string {
  const kinds = [...new Set(scored.prepared.views.map((v) => v.kind))]
  return kinds.length > 0 ? `; decoded ${kinds.join(', ')}` : ''
}

/** A text's scores as the model gave them, and what it decoded of the text. */
interface Remembered {
  probabilities: readonly number[]
  decoded: string
}

/**
 * Scores remembered per model for the texts seen last: a conversation's earlier turns come back
 * with every evaluation (and every proxied call), and the model gives a text the same scores
 * every time. Texts over 64 KB are not kept; all kept texts together hold at most 4 million
 * characters.
 */
const remembered = new WeakMap<Classifier, LRUCache<string, Remembered>>()

/**
 * How a text is read: a message as a message; a `context` document or a tool's result as a
 * document (`Classifier.scoreDocument`), where an instruction addressed to the assistant is
 * itself the attack, when the model has a head for documents.
 */
function readsAsDocument(classifier: Classifier, target: TargetText, documents: boolean): boolean {
  return documents && isDocument(target) && classifier.readsDocuments
}

/** A `context` document or a tool's result: text the model is given, where planted instructions hide. */
export function isDocument(target: TargetText): boolean {
  return target.kind === 'document' || target.role === 'context' || target.role === 'tool'
}

function read(classifier: Classifier, target: TargetText, document: boolean): Scored {
  return document
    ? classifier.scoreDocument(target.text, foldTarget(target))
    : classifier.score(target.text, foldTarget(target))
}

/** The scores of a text, and the model's work on it when it had to score it now. */
function scoresOf(
  classifier: Classifier,
  target: TargetText,
  document = false,
): Remembered & { scored?: Scored } {
  let cache = remembered.get(classifier)
  if (!cache) {
    cache = new LRUCache<string, Remembered>({
      max: 10_000,
      maxSize: 4_000_000,
      maxEntrySize: 65_536,
      sizeCalculation: (_value, text) => Math.max(1, text.length),
    })
    remembered.set(classifier, cache)
  }
  const key = document ? `\u0000${target.text}` : target.text
  const known = cache.get(key)
  if (known) return known
  const scored = read(classifier, target, document)
  const scores = { probabilities: scored.probabilities, decoded: decodedNote(scored) }
  if (target.text.length <= 65_536) cache.set(key, scores)
  return { ...scores, scored }
}

/** The model's work on a text whose phrases must be named (a failing one): scored again if remembered. */
function workOn(
  classifier: Classifier,
  target: TargetText,
  scores: { scored?: Scored },
  document = false,
): Scored {
  return scores.scored ?? read(classifier, target, document)
}

/**
 * prompt_injection: the probability that the text attempts an injection or a jailbreak. A
 * message is read as a message; `context` documents and tool results are read as documents
 * (`readsAsDocument`) unless `documents` is false, and their reason says so.
 */
export function injectionScorer(classifier: Classifier, documents = true): ModelScorer {
  return (target, threshold) => {
    const document = readsAsDocument(classifier, target, documents)
    const scores = scoresOf(classifier, target, document)
    const score = round(scores.probabilities[0] as number)
    const label = document ? 'injection (read as a document)' : 'injection'
    if (score <= threshold) return { score, reason: `${label} ${score}${scores.decoded}`, findings: [] }
    const scored = workOn(classifier, target, scores, document)
    const evidence =
      scored.range === null
        ? []
        : classifier.evidence(scored.prepared, document ? DOCUMENT_HEAD : 'injection', 3, scored.range)
    const weighed = evidence.length > 0 ? `; weighed most: ${quoted(scored, evidence)}` : ''
    return {
      score,
      reason: `${label} ${score}${scores.decoded}${weighed}`,
      findings: findings('prompt_injection', target, scored, evidence),
    }
  }
}

/**
 * toxicity: the probability that the text is toxic in any judged category. With every category
 * judged (no `flagged`) that is the model's toxic head; with some, the highest of
 * P(toxic) × P(category | toxic) over the judged categories the model has a head for, and the
 * lexicon's score (`lexicon`) for those it has none for.
 */
export function toxicityScorer(
  classifier: Classifier,
  categories: readonly string[] | null,
  lexicon: ((target: TargetText) => TextScore) | null,
): ModelScorer {
  const heads = classifier.model.heads.map((h) => h.name)
  const modelled = (categories ?? []).filter((c) => heads.includes(c))
  const unmodelled = categories === null ? [] : categories.filter((c) => !heads.includes(c))
  return (target, threshold) => {
    const scores = scoresOf(classifier, target)
    const p = scores.probabilities
    const toxic = p[0] as number
    const byCategory = heads
      .slice(1)
      .map((name, i) => ({ name, p: toxic * (p[i + 1] as number) }))
      .sort((a, b) => b.p - a.p)
    let score = toxic
    let head = 'toxic'
    if (categories !== null) {
      score = 0
      for (const c of byCategory)
        if (modelled.includes(c.name) && c.p > score) {
          score = c.p
          head = c.name
        }
    }
    let lexiconReason = ''
    let lexiconFindings: TextScore['findings'] = []
    if (lexicon !== null && unmodelled.length > 0) {
      const floor = lexicon(target)
      if (floor.score > score) {
        score = floor.score
        lexiconReason = `; ${floor.reason}`
        lexiconFindings = floor.findings
      }
    }
    score = round(score)
    const fail = score > threshold
    const scored = fail && lexiconReason === '' ? workOn(classifier, target, scores) : undefined
    const evidence = scored ? classifier.evidence(scored.prepared, head) : []
    const top = byCategory
      .filter((c) => c.p >= 0.1)
      .slice(0, 3)
      .map((c) => `${c.name} ${round(c.p)}`)
    const weighed = scored && evidence.length > 0 ? `; weighed most: ${quoted(scored, evidence)}` : ''
    return {
      score,
      reason: `toxic ${round(toxic)}${top.length > 0 ? ` (${top.join(', ')})` : ''}${lexiconReason}${weighed}`,
      findings: fail
        ? lexiconFindings.length > 0 || !scored
          ? lexiconFindings
          : findings('toxicity', target, scored, evidence)
        : [],
    }
  }
}
