/**
 * The incremental release of a streamed reply (docs/chat-completions.md): the reply is read as it
 * grows, and text is released once no enforced output rule can still flag it. Pure: no I/O.
 *
 * Each detector rule answers where a finding could still be in progress at the end of the text
 * (detectors/pending.ts); text before the earliest answer is released, and a finding before its
 * rule's answer is final: the reply fails whatever follows, and the stream stops. The findings
 * are those of the rule's own matcher on the whole text received, so a stream's verdict is the
 * whole-text evaluation's.
 *
 * Checking costs a pass of each rule over the text received: a check runs once the unchecked
 * text is at least 1/64 of the text (every chunk while the reply is short), so a reply of n
 * characters costs O(n) passes' worth of work in all, whatever its chunking.
 */
import { type Target, targetMask } from './conversation.js'
import { CodePointIndex } from './detectors/code-points.js'
import type { TextMatcher } from './detectors/types.js'
import type { CompiledPolicy } from './evaluate.js'
import type { TargetText } from './types.js'

/** A detector rule as the release engine reads it. */
export interface StreamDetector {
  match: TextMatcher
  pending: (text: string, from: number) => number
}

/** How a reply can be streamed under a set of policies. */
export type StreamPlan =
  | { mode: 'incremental'; detectors: StreamDetector[] }
  | { mode: 'buffered'; reason: string }

const OUTPUT_MASK = targetMask(['output', 'assistant'] satisfies Target[])

/**
 * The rules an enforced policy reading the reply (output or assistant targets) applies to it:
 * detectors expected to pass are released incrementally; any other rule (a scored or judged
 * one, a detector expected to find something, a rule that cannot be evaluated) needs the whole
 * reply, and makes the stream buffered. Monitored policies never hold text back.
 */
export function streamPlan(policies: readonly CompiledPolicy[]): StreamPlan {
  const detectors: StreamDetector[] = []
  for (const compiled of policies) {
    if (compiled.policy.mode !== 'enforce' || (compiled.targets & OUTPUT_MASK) === 0) continue
    for (const rule of compiled.rules) {
      const engine = rule.engine
      if (engine.kind === 'detector' && rule.expected === 'pass') {
        detectors.push({ match: engine.match, pending: engine.pending })
        continue
      }
      return { mode: 'buffered', reason: `an enforced output ${rule.type} rule needs the whole reply` }
    }
  }
  return { mode: 'incremental', detectors }
}

/** What one step of the engine decided: the text now released, and whether the reply failed. */
export interface ReleaseStep {
  release: string
  violation: boolean
}

/** The share of the text that must be new before the next check (1/64): linear cost in all. */
const CHECK_SHARE = 64

/** Releases a growing reply as its detectors allow. */
export class ReleaseEngine {
  private text = ''
  private released = 0
  private checked = 0
  private violated = false
  private readonly from: number[]

  constructor(private readonly detectors: readonly StreamDetector[]) {
    this.from = detectors.map(() => 0)
  }

  /** The text received so far. */
  get received(): string {
    return this.text
  }

  /** The text released so far. */
  get sent(): string {
    return this.text.slice(0, this.released)
  }

  /** Adds the next piece of the reply; returns what can now be released, or the violation. */
  push(delta: string): ReleaseStep {
    if (this.violated) return { release: '', violation: true }
    this.text += delta
    const unchecked = this.text.length - this.checked
    if (unchecked === 0 || unchecked < Math.floor(this.text.length / CHECK_SHARE))
      return { release: '', violation: false }
    return this.check(false)
  }

  /** The reply is complete: every finding is final; releases the rest unless a rule fails. */
  end(): ReleaseStep {
    if (this.violated) return { release: '', violation: true }
    return this.check(true)
  }

  private check(final: boolean): ReleaseStep {
    const text = this.text
    this.checked = text.length
    let safe = text.length
    const target: TargetText = { source: 'messages', index: 0, role: 'assistant', text }
    let index: CodePointIndex | undefined
    for (const [i, detector] of this.detectors.entries()) {
      let pending = text.length
      if (!final) {
        pending = detector.pending(text, this.from[i] as number)
        this.from[i] = pending
      }
      const findings = detector.match(target)
      if (findings.length > 0) {
        index ??= new CodePointIndex(text)
        const limit = index.at(pending)
        if (findings.some((f) => f.start < limit)) {
          this.violated = true
          return { release: '', violation: true }
        }
      }
      if (pending < safe) safe = pending
    }
    if (safe <= this.released) return { release: '', violation: false }
    const release = text.slice(this.released, safe)
    this.released = safe
    return { release, violation: false }
  }
}
