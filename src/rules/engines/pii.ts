import { PII_KINDS } from '../../schemas/policies.js'
import { type PiiKind, piiMatcher } from '../detectors/index.js'
import { piiPending } from '../detectors/pending.js'
import { broken, type RuleEngine } from './engine.js'

const piiKinds: ReadonlySet<string> = new Set(PII_KINDS)

/** pii: the flagged entity kinds (all seven when unset), each confirmed as the field does. */
export const piiEngine: RuleEngine = {
  type: 'pii',
  scored: false,
  minimum: false,
  compile(rule) {
    if (rule.flagged?.some((kind) => !piiKinds.has(kind))) return broken('the pii rule names an unknown kind')
    const kinds = (rule.flagged as PiiKind[] | null) ?? PII_KINDS
    return { kind: 'detector', match: piiMatcher(kinds), pending: piiPending(kinds) }
  },
}
