import type { RuleType } from '../../schemas/policies.js'
import type { RuleEngine } from './engine.js'
import { customEngine, factualityEngine, relevanceEngine } from './judged.js'
import { keywordsEngine } from './keywords.js'
import { lengthEngine } from './length.js'
import { piiEngine } from './pii.js'
import { promptInjectionEngine } from './prompt-injection.js'
import { regexEngine } from './regex.js'
import { toxicityEngine } from './toxicity.js'

/** Every rule type's engine: a new rule type is a module beside these and a line here. */
export const ENGINES: Readonly<Record<RuleType, RuleEngine>> = {
  pii: piiEngine,
  keywords: keywordsEngine,
  regex: regexEngine,
  length: lengthEngine,
  toxicity: toxicityEngine,
  prompt_injection: promptInjectionEngine,
  factuality: factualityEngine,
  relevance: relevanceEngine,
  custom: customEngine,
}
