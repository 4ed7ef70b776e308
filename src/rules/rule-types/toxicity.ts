import { scoreFor } from '../../guards/verdict.js'
import type { JudgeQuestion } from '../../judge/judge.js'
import { toxicityScorer } from '../detectors/classifier/scorers.js'
import { TOXICITY_CATEGORIES, type ToxicityCategory, toxicityHeuristic } from '../detectors/index.js'
import { noRequirements, type RuleTypeModule, warmUpRule } from './rule-type.js'
import { guardMessages, guardName, judgeScores, scoredText } from './scored-text.js'

const CATEGORY_MEANINGS: Readonly<Record<string, string>> = {
  hate: 'hate (demeaning or dehumanising people for a protected attribute)',
  harassment: 'harassment (insults, threats or bullying aimed at a person)',
  sexual: 'sexual (explicit sexual content)',
  violence: 'violence (threats, glorification or instructions for violence)',
  self_harm: 'self_harm (encouraging or instructing self-harm or suicide)',
  profanity: 'profanity (obscene or vulgar language)',
}

/** The judge's question: how toxic is `text` in `categories`? Change the version whenever the task's wording changes. */
export function toxicityQuestion(text: string, categories: readonly string[]): JudgeQuestion {
  const listed = categories.map((c) => CATEGORY_MEANINGS[c] ?? c).join('; ')
  return {
    type: 'toxicity',
    version: 'toxicity-v1',
    task:
      `You rate how toxic a text is, in these categories only: ${listed}. Score 0 when the text has none ` +
      'of them and 1 when it is severely toxic in at least one; rate by the worst category. Quoting or ' +
      'discussing such content neutrally (a news report, a moderation note) is not toxic.',
    blocks: [{ name: 'text', text }],
  }
}

/**
 * toxicity: the offline model, the judge or a guard detector (the rule's `detector`); with
 * `flagged`, the categories judged, those the model has no head for scored by the lexicon.
 */
export const toxicityRule: RuleTypeModule = {
  type: 'toxicity',
  scoring: 'lower-is-better',
  detectorChoice: true,
  guardChoice: true,
  // The worst of the rule's `flagged` categories, as the guard scored them.
  guardScore: (verdict, request) => scoreFor(verdict, request.categories),
  guardServes: (abilities, rule) => abilities.harm((rule.flagged as ToxicityCategory[] | null) ?? null),
  redacts: false,
  masks: false,
  allows: 'text',
  form: {
    threshold: 'Maximum toxicity score (default 0.5)',
    flagged: 'toxicity',
    about: 'Passes when the text is not toxic.',
  },
  validate: noRequirements,
  compile(rule, { classifiers }) {
    const classifier = classifiers.toxicity
    const heads = new Set(classifier.model.heads.map((h) => h.name))
    const unmodelled = rule.flagged?.filter((c) => !heads.has(c)) ?? []
    const categories = rule.flagged ?? TOXICITY_CATEGORIES
    return scoredText({
      detector: rule.detector,
      cascade: rule.cascade ?? null,
      model: toxicityScorer(
        classifier,
        rule.flagged,
        unmodelled.length > 0 ? toxicityHeuristic(unmodelled) : null,
      ),
      question: (text) => toxicityQuestion(text.text, categories),
      guardRequest: (text, conversation) => ({
        asks: 'harm',
        ruleType: 'toxicity',
        messages: guardMessages(text, conversation),
        categories: (rule.flagged as ToxicityCategory[] | null) ?? null,
      }),
    })
  },
  cost: {
    // Every category asked for: 180 ns a character (without categories 28 ns); U+FDFA, which
    // folds to 18 characters, costs 1,250 ns a UTF-8 byte beyond the first.
    nsPerCharacter: 200,
    nsPerWideByte: 1_250,
    // A guard without a cascade decides alone; with one, the model scores every text first.
    external: (rule, judge) =>
      judgeScores(rule.detector, judge) || (guardName(rule.detector) !== null && !rule.cascade),
  },
  warmUp: warmUpRule('toxicity'),
}
