import type { FieldError } from '../errors.js'
import { checkRules } from '../rules/validation.js'
import type { PolicyRule } from '../schemas/policies.js'
import { COMPILE_BUDGET_MS, checkMs } from './cost.js'
import { guardRuleErrors, NO_GUARDS } from './guard-rules.js'
import type { Guards } from './guard-scorer.js'
import type { EvaluationPool } from './pool.js'

/**
 * Checks rules as a create does, wherever that is cheap: on the event loop when their patterns
 * are estimated to compile in under COMPILE_BUDGET_MS (cost.ts), in the evaluation
 * pool otherwise (a valid draft of 64 costly patterns once held the loop for seconds). Without
 * a pool, on the event loop.
 */
export class RuleChecks {
  constructor(
    private readonly deps: {
      pool: EvaluationPool | null
      /** The guard detectors configured: a rule naming one is checked against its grant and format. */
      guards?: Guards | null
    },
  ) {}

  /**
   * The problems of `rules` (pointers under `base`), the workspace's pattern verdicts kept apart,
   * and those of the guard detectors they name (checked here, where the configuration is).
   */
  async check(
    workspace: string,
    rules: PolicyRule[],
    definition: string | null,
    base: string,
  ): Promise<FieldError[]> {
    const { pool, guards } = this.deps
    const errors =
      pool !== null && checkMs(rules) >= COMPILE_BUDGET_MS
        ? await pool.check({ workspace, rules, definition, base })
        : checkRules(rules, definition, base, { workspace })
    if (!rules.some((rule) => rule.detector !== undefined)) return errors
    if (guards) {
      await guards.prepare(workspace)
      errors.push(
        ...guardRuleErrors(rules, base, guards.directory, (name) => guards.granted(name, workspace)),
      )
    } else errors.push(...guardRuleErrors(rules, base, NO_GUARDS, () => false))
    return errors
  }
}
