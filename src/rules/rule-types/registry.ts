import type { RuleType } from '../../schemas/policies.js'
import { customRule } from './custom.js'
import { factualityRule } from './factuality.js'
import { keywordsRule } from './keywords.js'
import { lengthRule } from './length.js'
import { piiRule } from './pii.js'
import { promptInjectionRule } from './prompt-injection.js'
import { regexRule } from './regex.js'
import { relevanceRule } from './relevance.js'
import type { RuleTypeModule } from './rule-type.js'
import { toolsRule } from './tools.js'
import { toxicityRule } from './toxicity.js'

/**
 * Every rule type's module, by type (docs/rule-types.md): a new rule type is a module beside
 * these, its tests, and a line here (and its name in RULE_TYPES, src/schemas/policies.ts, which
 * the type checker then asks for here).
 */
export const RULE_TYPE_MODULES: Readonly<Record<RuleType, RuleTypeModule>> = {
  pii: piiRule,
  keywords: keywordsRule,
  regex: regexRule,
  length: lengthRule,
  toxicity: toxicityRule,
  prompt_injection: promptInjectionRule,
  factuality: factualityRule,
  relevance: relevanceRule,
  custom: customRule,
  tools: toolsRule,
}

/** The module of `type`. */
export const ruleType = (type: RuleType): RuleTypeModule => RULE_TYPE_MODULES[type]
