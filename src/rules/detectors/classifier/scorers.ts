import type { FindingKind, TargetText } from '../../types.js'
import { CodePointIndex } from '../code-points.js'
import { foldTarget, originalEnd, originalStart } from '../fold.js'
import type { TextScore } from '../types.js'
import type { Classifier, Evidence, Scored } from './linear.js'

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

/** prompt_injection: the probability that the text attempts an injection or a jailbreak. */
export function injectionScorer(classifier: Classifier): ModelScorer {
  return (target, threshold) => {
    const scored = classifier.score(target.text, foldTarget(target))
    const score = round(scored.probabilities[0] as number)
    const evidence = score > threshold ? classifier.evidence(scored.prepared, 'injection') : []
    const weighed = evidence.length > 0 ? `; weighed most: ${quoted(scored, evidence)}` : ''
    return {
      score,
      reason: `injection ${score}${decodedNote(scored)}${weighed}`,
      findings: score > threshold ? findings('prompt_injection', target, scored, evidence) : [],
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
    const scored = classifier.score(target.text, foldTarget(target))
    const p = scored.probabilities
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
    const evidence = fail && lexiconReason === '' ? classifier.evidence(scored.prepared, head) : []
    const top = byCategory
      .filter((c) => c.p >= 0.1)
      .slice(0, 3)
      .map((c) => `${c.name} ${round(c.p)}`)
    const weighed = evidence.length > 0 ? `; weighed most: ${quoted(scored, evidence)}` : ''
    return {
      score,
      reason: `toxic ${round(toxic)}${top.length > 0 ? ` (${top.join(', ')})` : ''}${lexiconReason}${weighed}`,
      findings: fail
        ? lexiconFindings.length > 0
          ? lexiconFindings
          : findings('toxicity', target, scored, evidence)
        : [],
    }
  }
}
