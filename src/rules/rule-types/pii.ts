import { PII_KINDS } from '../../schemas/policies.js'
import { type PiiKind, piiMatcher } from '../detectors/index.js'
import { piiPending } from '../detectors/pending.js'
import { broken, detector, type RuleTypeModule, warmUpRule } from './rule-type.js'

const piiKinds: ReadonlySet<string> = new Set(PII_KINDS)

/** pii: the flagged entity kinds (all of them when unset), each confirmed as the field does. */
export const piiRule: RuleTypeModule = {
  type: 'pii',
  scoring: null,
  detectorChoice: false,
  guardChoice: false,
  redacts: true,
  masks: true,
  allows: 'findings',
  form: { flagged: 'pii', about: 'Passes when none of the chosen kinds of personal data occurs.' },
  validate(rule, { at }) {
    const errors = []
    for (const [j, kind] of (rule.flagged ?? []).entries())
      if (!piiKinds.has(kind))
        errors.push({ pointer: `${at}/flagged/${j}`, detail: `must be one of: ${PII_KINDS.join(', ')}` })
    return errors
  },
  compile(rule) {
    if (rule.flagged?.some((kind) => !piiKinds.has(kind))) return broken('the pii rule names an unknown kind')
    const kinds = (rule.flagged as PiiKind[] | null) ?? PII_KINDS
    return detector(piiMatcher(kinds), piiPending(kinds))
  },
  // Candidates start from digits, `@` and `:` (cost.ts, TRIGGER; an `@` counts three; a hyphen
  // between letters and sixteen capitals in a row count for a MAC address or codice fiscale
  // without a digit): text without them costs at most 61 ns a character; a trigger at most 14 µs (e-mails without
  // digits, 42 µs an `@`; distinct phone numbers, 11–19 µs a digit) on a loaded two-core machine,
  // bench/evaluation-cost.mjs. A worst case of 8 µs a character for all text sent every 4 KB
  // conversation to the pool. Text is read in NFKC (full-width digits are triggers there too):
  // text NFKC leaves alone, most text beyond ASCII, costs it about 7 ns a wide byte; what NFKC
  // expands costs more (U+FDFA, 18 characters once read: about 1.65 µs a wide byte), which a
  // price per wide byte would charge to all text beyond ASCII, so none is set.
  cost: { nsPerCharacter: 80, nsPerWideByte: 0, nsPerTrigger: 30_000 },
  warmUp: warmUpRule('pii'),
}
