import type { Finding, TargetText } from '../types.js'
import { absent, broken, type RuleTypeModule, skipped } from './rule-type.js'

/**
 * A tool name pattern as a test: `*` matches any run of characters (none included), every other
 * character itself, case-sensitively (tool names are identifiers). Linear in the name for a
 * pattern without `*`, at most name × pattern otherwise (both at most 256 characters).
 */
export function toolPattern(pattern: string): (name: string) => boolean {
  if (!pattern.includes('*')) return (name) => name === pattern
  const pieces = pattern.split('*')
  const first = pieces[0] as string
  const last = pieces[pieces.length - 1] as string
  const middle = pieces.slice(1, -1).filter((p) => p !== '')
  return (name) => {
    if (name.length < first.length + last.length) return false
    if (!name.startsWith(first) || !name.endsWith(last)) return false
    // The middle pieces in order, each as early as it fits: a greedy match is the match for `*`.
    let at = first.length
    const end = name.length - last.length
    for (const piece of middle) {
      const found = name.indexOf(piece, at)
      if (found < 0 || found + piece.length > end) return false
      at = found + piece.length
    }
    return true
  }
}

/** Whether a tool name is one the listed patterns allow. */
export function toolAllowList(patterns: readonly string[]): (name: string) => boolean {
  const exact = new Set(patterns.filter((p) => !p.includes('*')))
  const globs = patterns.filter((p) => p.includes('*')).map(toolPattern)
  return (name) => exact.has(name) || globs.some((test) => test(name))
}

/**
 * The finding of a call to a tool not listed: the call's name (path `#name`), counted in the
 * name; a call without a name, an empty span at its start.
 */
function callFinding(target: TargetText): Finding {
  const name = target.call?.name ?? null
  return {
    kind: 'tool',
    source: target.source,
    index: target.index,
    start: 0,
    end: name === null ? 0 : [...name].length,
    text: name ?? '',
    tool_call: target.tool_call ?? 0,
    path: '#name',
  }
}

/**
 * tools: the tool names the model may call (`flagged`, `*` a wildcard). It reads the tool calls
 * of the targeted assistant turns (`assistant`, `output`): a call to any other name fails the
 * rule, one finding per such call naming it. The texts of messages are not read, so a streamed
 * reply's text is never held back for it; a call is released only whole, once the whole reply
 * passed (src/rules/stream.ts, ToolCallWatch). Per-tool rules on arguments can follow as a
 * field of this type naming the tool they read.
 */
export const toolsRule: RuleTypeModule = {
  type: 'tools',
  scoring: null,
  detectorChoice: false,
  guardChoice: false,
  redacts: false,
  masks: false,
  allows: null,
  form: {
    flagged: 'phrases',
    about: 'Passes when every tool call names one of these tools (* matches any run of characters).',
  },
  validate(rule, { at }) {
    if (rule.flagged !== null) return []
    return [
      {
        pointer: `${at}/flagged`,
        detail: 'is required for a tools rule: the tool names the model may call (* as a wildcard)',
      },
    ]
  },
  compile(rule) {
    if (rule.flagged === null) return broken('the tools rule lists no tools')
    const allowed = toolAllowList(rule.flagged)
    const match = (target: TargetText): Finding[] => {
      // Only a call read from a conversation knows its name: a streamed call's growing
      // arguments (no `call`) are judged once whole.
      if (target.kind !== 'arguments' || target.call === undefined) return []
      const name = target.call.name
      return name !== null && allowed(name) ? [] : [callFinding(target)]
    }
    return {
      evaluate({ texts, targets }) {
        if (texts.length === 0) return skipped('detector', absent(targets))
        const findings: Finding[] = []
        for (const text of texts) findings.push(...match(text))
        return {
          status: findings.length > 0 ? 'fail' : 'pass',
          score: null,
          method: 'detector',
          reason:
            findings.length > 0
              ? `calls a tool not listed: ${[...new Set(findings.map((f) => f.text || '(no name)'))].join(', ')}`
              : null,
          findings,
        }
      },
      // Nothing of a message's text is held back for a tool list.
      stream: { hold: 'pending', match, pending: (text) => text.length },
    }
  },
  cost: { nsPerCharacter: 1, nsPerWideByte: 0 },
  warmUp: null,
}
