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
 *
 * Scored rules (toxicity, prompt_injection, custom) read windows of the reply instead
 * (`WindowCutter`): a window is scored with the one before it as context, and text is released
 * only up to the end of the last window that passed. Scoring is the caller's (it may ask the
 * judge); the engine cuts the windows and is told which passed.
 */
import { type Target, targetMask } from './conversation.js'
import { CodePointIndex } from './detectors/code-points.js'
import type { TextMatcher } from './detectors/types.js'
import {
  type CompiledPolicy,
  type CompiledRule,
  type EvaluablePolicy,
  type EvaluationOutcome,
  foldAllowed,
} from './evaluate.js'
import { unitOffset } from './masking.js'
import type { TargetText } from './types.js'

/** A detector rule as the release engine reads it. */
export interface StreamDetector {
  match: TextMatcher
  pending: (text: string, from: number) => number
  /** A mask rule (docs/masking.md): its findings are replaced by `[KIND]` in what is released, not a violation. */
  mask?: boolean
}

/** How a reply can be streamed under a set of policies. */
export type StreamPlan =
  | {
      mode: 'incremental'
      detectors: StreamDetector[]
      /** The enforced output policies with their scored rules only, scored on windows; empty when none. */
      scored: CompiledPolicy[]
    }
  | { mode: 'buffered'; reason: string }

const OUTPUT_MASK = targetMask(['output', 'assistant'] satisfies Target[])

/** Whether an enforced policy reads the reply (its output or assistant targets). */
export function guardsReply(policies: readonly Pick<EvaluablePolicy, 'mode' | 'target'>[]): boolean {
  return policies.some((p) => p.mode === 'enforce' && (targetMask(p.target) & OUTPUT_MASK) !== 0)
}

/**
 * The rules an enforced policy reading the reply (output or assistant targets) applies to it, as
 * each rule type's module says it holds the reply back: detectors expected to pass are released
 * incrementally; toxicity, prompt_injection and custom rules expected to pass are scored on
 * windows; any other rule (factuality, relevance, a rule expected to fail, a rule that cannot be
 * evaluated) needs the whole reply, and makes the stream buffered. Monitored policies never hold
 * text back.
 */
export function streamPlan(policies: readonly CompiledPolicy[]): StreamPlan {
  const detectors: StreamDetector[] = []
  const scored: CompiledPolicy[] = []
  for (const compiled of policies) {
    if (compiled.policy.mode !== 'enforce' || (compiled.targets & OUTPUT_MASK) === 0) continue
    const windowed: CompiledRule[] = []
    for (const rule of compiled.rules) {
      // What the rule's type holds back (rule-types/rule-type.ts, StreamHold); a rule expected
      // to fail passes only once the whole reply is read.
      const stream = rule.expected === 'pass' ? rule.compiled.stream : ({ hold: 'whole' } as const)
      if (stream.hold === 'pending') {
        const allowed = rule.allowedFindings
        // A finding the rule's `allowed` names does not count, streamed as whole.
        const match: TextMatcher =
          allowed === null
            ? stream.match
            : (target) =>
                stream.match(target).filter((f) => f.text === null || !allowed.has(foldAllowed(f.text)))
        detectors.push({ match, pending: stream.pending, mask: rule.masks })
      } else if (stream.hold === 'window') windowed.push(rule)
      else return { mode: 'buffered', reason: `an enforced output ${rule.type} rule needs the whole reply` }
    }
    if (windowed.length > 0) scored.push({ ...compiled, rules: windowed })
  }
  return { mode: 'incremental', detectors, scored }
}

/**
 * A window of a reply for scored rules: `text` is the reply from `from` (the start of the
 * window before, the context) to `end`; the window itself starts at `start`. Offsets are UTF-16.
 */
export interface ScoredWindow {
  from: number
  start: number
  end: number
  text: string
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff
/** Whitespace after a sentence's end: space, tab, line breaks, no-break and ideographic spaces. */
const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000 || c === 0x2028
/** `.`, `!`, `?`. */
const isStop = (c: number) => c === 46 || c === 33 || c === 63

/**
 * Cuts a growing reply into windows for scored rules: a window holds at least `size` code points
 * and extends to the next sentence end (`.`, `!` or `?` followed by whitespace, or a line break);
 * one that reaches four times `size` without a sentence end ends at its last whitespace past `size`
 * code points (or there, when it has none), so that text without punctuation is still released.
 * When the reply is complete, what follows the last window is the last window. Each character
 * is read once, plus the rest of a window cut at its last whitespace: linear in the reply.
 */
export class WindowCutter {
  private start = 0
  private previous = 0
  private scan = 0
  private points = 0
  private lastSpace = -1

  constructor(private readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError('a window holds at least one code point')
  }

  /** The next complete window of `text` (the reply so far, or whole when `final`), or null. */
  next(text: string, final: boolean): ScoredWindow | null {
    while (this.scan < text.length) {
      const c = text.charCodeAt(this.scan)
      const paired = isHigh(c) && this.scan + 1 < text.length && isLow(text.charCodeAt(this.scan + 1))
      // Half a surrogate pair at the end: its other half is still to come.
      if (isHigh(c) && !paired && this.scan + 1 >= text.length && !final) return null
      const after = this.scan + (paired ? 2 : 1)
      const points = this.points + 1
      if (points >= this.size) {
        if (c === 10) return this.cut(text, after)
        if (isStop(c)) {
          if (after < text.length) {
            if (isSpace(text.charCodeAt(after))) return this.cut(text, after)
          } else if (final) return this.cut(text, after)
          // What follows the stop decides whether it ends a sentence (3.14, e.g.): wait for it.
          else return null
        }
        if (isSpace(c)) this.lastSpace = after
        if (points >= this.size * 4)
          return this.cut(text, this.lastSpace > this.start ? this.lastSpace : after)
      }
      this.points = points
      this.scan = after
    }
    if (final && this.start < text.length) return this.cut(text, text.length)
    return null
  }

  private cut(text: string, end: number): ScoredWindow {
    const window = { from: this.previous, start: this.start, end, text: text.slice(this.previous, end) }
    this.previous = this.start
    this.start = end
    this.scan = end
    this.points = 0
    this.lastSpace = -1
    return window
  }
}

/** What one step of the engine decided: the text now released, and whether the reply failed. */
export interface ReleaseStep {
  release: string
  violation: boolean
}

/** The reply's content, as the release engine reads it. */
const REPLY: Omit<TargetText, 'text'> = { source: 'messages', index: 0, role: 'assistant' }

/** The share of the text that must be new before the next check (1/64): linear cost in all. */
const CHECK_SHARE = 64

/**
 * Releases a growing reply as its detectors allow and, when scored rules read it (`windowSize`
 * given), only up to the end of the last window that passed them (`passed`).
 */
export class ReleaseEngine {
  private text = ''
  private released = 0
  private checked = 0
  private violated = false
  private final = false
  private readonly from: number[]
  /** Where the detectors' last check allows release to. */
  private detectorsSafe = 0
  /** The end of the last window that passed the scored rules; the text's end when there are none. */
  private passedEnd: number
  private readonly windows: WindowCutter | null
  /** A mask rule's final findings (UTF-16, apart, by start), replaced by their `[KIND]` when released. */
  private readonly masked: { start: number; end: number; label: string }[] = []

  constructor(
    private readonly detectors: readonly StreamDetector[],
    windowSize: number | null = null,
    /** What the text is, as the detectors read it: the reply's content, or a tool call's arguments. */
    private readonly reading: Omit<TargetText, 'text'> = REPLY,
  ) {
    this.from = detectors.map(() => 0)
    this.windows = windowSize === null ? null : new WindowCutter(windowSize)
    this.passedEnd = windowSize === null ? Number.POSITIVE_INFINITY : 0
  }

  /**
   * The next window for the scored rules to score, in order, once it is complete (after `push`
   * or `end`); null when none is ready, or when no scored rule reads the reply.
   */
  nextWindow(): ScoredWindow | null {
    if (this.violated || this.windows === null) return null
    return this.windows.next(this.text, this.final)
  }

  /** Every scored rule passed the window ending at `end`: releases what the detectors allow up to it. */
  passed(end: number): ReleaseStep {
    if (this.violated) return { release: '', violation: true }
    if (end > this.passedEnd) this.passedEnd = end
    return this.releaseTo(this.detectorsSafe)
  }

  /** A window failed a scored rule: the reply fails, whatever follows. */
  failed(): void {
    this.violated = true
  }

  /** The text received so far. */
  get received(): string {
    return this.text
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
    this.final = true
    return this.check(true)
  }

  private check(final: boolean): ReleaseStep {
    const text = this.text
    this.checked = text.length
    let safe = text.length
    const target: TargetText = { ...this.reading, text }
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
        const final = findings.filter((f) => f.start < limit)
        if (final.length > 0 && !detector.mask) {
          this.violated = true
          return { release: '', violation: true }
        }
        for (const f of final)
          this.mask(unitOffset(text, f.start), unitOffset(text, f.end), `[${f.kind.toUpperCase()}]`)
      }
      if (pending < safe) safe = pending
    }
    this.detectorsSafe = safe
    return this.releaseTo(safe)
  }

  /** Records a mask rule's final finding (UTF-16 offsets), merged with one it overlaps. */
  private mask(start: number, end: number, label: string): void {
    // Already released (found again on a later check), or recorded: nothing new.
    if (start < this.released) return
    for (const m of this.masked)
      if (start < m.end && m.start < end) {
        m.start = Math.min(m.start, start)
        m.end = Math.max(m.end, end)
        return
      }
    this.masked.push({ start, end, label })
    this.masked.sort((a, b) => a.start - b.start)
  }

  private releaseTo(detectorsSafe: number): ReleaseStep {
    let safe = Math.min(detectorsSafe, this.passedEnd)
    // Never cut through a masked span: it leaves whole, as its label.
    for (const m of this.masked) if (m.start < safe && safe < m.end) safe = m.start
    if (safe <= this.released) return { release: '', violation: false }
    let release = ''
    let at = this.released
    for (const m of this.masked) {
      if (m.end <= at || m.start >= safe) continue
      release += this.text.slice(at, m.start) + m.label
      at = m.end
    }
    release += this.text.slice(at, safe)
    this.released = safe
    return { release, violation: false }
  }
}

/** A window of a released reply and how the scored rules judged it. */
export interface WindowVerdict {
  window: ScoredWindow
  outcome: EvaluationOutcome
}

/**
 * The windows of a released reply, scored in order, one at a time (the judge's calls of one
 * window concurrently): `current` is the verdict being awaited, null when none is.
 */
class WindowQueue {
  private readonly waiting: ScoredWindow[] = []
  current: Promise<WindowVerdict> | null = null

  constructor(private readonly score: (window: ScoredWindow) => Promise<EvaluationOutcome>) {}

  add(window: ScoredWindow): void {
    this.waiting.push(window)
    this.start()
  }

  /** The current verdict was read: the next window, if any, is scored. */
  settled(): void {
    this.current = null
    this.start()
  }

  private start(): void {
    if (this.current !== null) return
    const window = this.waiting.shift()
    if (window === undefined) return
    this.current = this.score(window).then((outcome) => ({ window, outcome }))
    // Raced against the upstream's chunks: a reply that stops first must not leave it unhandled.
    this.current.catch(() => undefined)
  }
}

/**
 * The release decision for a reply streamed under a plan (`streamPlan`): what of the text
 * received may be sent, as the detectors allow and, when scored rules read the reply, as their
 * windows pass. The windows are scored by `score` (the caller's: it may ask the judge), one at a
 * time, in order. Pure but for `score`: the relay reads the upstream and writes the events.
 */
export class StreamRelease {
  private readonly engine: ReleaseEngine
  private readonly windows: WindowQueue | null

  constructor(
    plan: { detectors: readonly StreamDetector[]; scored: readonly CompiledPolicy[] },
    windowSize: number,
    score: (window: ScoredWindow) => Promise<EvaluationOutcome>,
  ) {
    const windowed = plan.scored.length > 0
    this.engine = new ReleaseEngine(plan.detectors, windowed ? windowSize : null)
    this.windows = windowed ? new WindowQueue(score) : null
  }

  /** The text received so far. */
  get received(): string {
    return this.engine.received
  }

  /** The verdict of the window being scored, to await beside the next chunk; null when none is. */
  get scoring(): Promise<WindowVerdict> | null {
    return this.windows?.current ?? null
  }

  /** Adds the next piece of the reply: what can now be released, or a detector's violation. */
  push(text: string): ReleaseStep {
    const step = this.engine.push(text)
    if (!step.violation) this.cut()
    return step
  }

  /** A window's verdict (read from `scoring`): the text it releases, or the outcome that failed it. */
  settle(verdict: WindowVerdict): string | EvaluationOutcome {
    this.windows?.settled()
    if (verdict.outcome.verdict !== 'pass') {
      this.engine.failed()
      return verdict.outcome
    }
    return this.engine.passed(verdict.window.end).release
  }

  /** The reply is complete: what the detectors release of the rest, or their violation. */
  end(): ReleaseStep {
    return this.engine.end()
  }

  /**
   * After `end`: every window left, scored in turn: the text they release, or the outcome that
   * failed one.
   */
  async drain(): Promise<string | EvaluationOutcome> {
    this.cut()
    let text = ''
    for (let scoring = this.scoring; scoring !== null; scoring = this.scoring) {
      const settled = this.settle(await scoring)
      if (typeof settled !== 'string') return settled
      text += settled
    }
    return text
  }

  /** Hands the windows now complete to the scored rules. */
  private cut(): void {
    if (this.windows === null) return
    for (let window = this.engine.nextWindow(); window !== null; window = this.engine.nextWindow())
      this.windows.add(window)
  }
}

/**
 * The watch over a streamed reply's tool calls (docs/agents.md): nothing of a call is released
 * while the reply streams (an agent must never receive half a call it would try to run); the
 * evaluation of the whole reply judges every call, and the relay sends each whole once it passed.
 * Meanwhile each call's arguments are read as they grow by the detector rules, as the text of
 * that call (kind `arguments`), so that a call that can only fail stops the stream at once
 * instead of at the reply's end. Pure: no I/O.
 */
export class ToolCallWatch {
  private readonly calls = new Map<number, ReleaseEngine>()

  constructor(private readonly detectors: readonly StreamDetector[]) {}

  /** Adds a piece of call `call`'s arguments: whether a detector now finds a violation in them. */
  push(call: number, piece: string): boolean {
    return this.engineOf(call).push(piece).violation
  }

  /** The reply is complete: whether a detector finds a violation in any call's whole arguments. */
  end(): boolean {
    for (const engine of this.calls.values()) if (engine.end().violation) return true
    return false
  }

  private engineOf(call: number): ReleaseEngine {
    let engine = this.calls.get(call)
    if (!engine) {
      engine = new ReleaseEngine(this.detectors, null, {
        source: 'messages',
        index: 0,
        role: 'assistant',
        kind: 'arguments',
        tool_call: call,
      })
      this.calls.set(call, engine)
    }
    return engine
  }
}
