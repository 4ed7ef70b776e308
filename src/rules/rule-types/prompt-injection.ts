import { injectionScorer } from '../detectors/classifier/scorers.js'
import { noRequirements, type RuleTypeModule, warmUpRule } from './rule-type.js'
import { judgeScores, scoredText } from './scored-text.js'

/** prompt_injection: the offline model or the judge (the rule's `detector`). */
export const promptInjectionRule: RuleTypeModule = {
  type: 'prompt_injection',
  scoring: 'lower-is-better',
  detectorChoice: true,
  redacts: false,
  form: {
    threshold: 'Maximum injection score (default 0.5)',
    about: 'Passes when there is no injection or jailbreak attempt.',
  },
  validate: noRequirements,
  compile(rule, { classifiers }) {
    return scoredText(rule.detector, injectionScorer(classifiers.prompt_injection), (text) => ({
      type: 'prompt_injection',
      text: text.text,
    }))
  },
  cost: {
    // 80 ns a character; U+FDFA, which folds to 18 characters, 1,250 ns a UTF-8 byte beyond the first.
    nsPerCharacter: 100,
    nsPerWideByte: 1_250,
    external: (rule, judge) => judgeScores(rule.detector, judge),
  },
  warmUp: warmUpRule('prompt_injection'),
}
