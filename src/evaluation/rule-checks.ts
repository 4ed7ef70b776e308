import type { FieldError } from '../errors.js'
import { checkRules } from '../rules/validation.js'
import type { PolicyRule } from '../schemas/policies.js'
import { COMPILE_BUDGET_MS, checkMs } from './cost.js'
import type { EvaluationPool } from './pool.js'

/**
 * Checks rules as a create does, wherever that is cheap: on the event loop when their patterns
 * are estimated to compile in under COMPILE_BUDGET_MS (cost.ts), in the evaluation
 * pool otherwise (a valid draft of 64 costly patterns once held the loop for seconds). Without
 * a pool, on the event loop.
 */
export class RuleChecks {
  constructor(private readonly deps: { pool: EvaluationPool | null }) {}

  /** The problems of `rules` (pointers under `base`), the workspace's pattern verdicts kept apart. */
  async check(
    workspace: string,
    rules: PolicyRule[],
    definition: string | null,
    base: string,
  ): Promise<FieldError[]> {
    const { pool } = this.deps
    if (pool !== null && checkMs(rules) >= COMPILE_BUDGET_MS)
      return pool.check({ workspace, rules, definition, base })
    return checkRules(rules, definition, base, { workspace })
  }
}
