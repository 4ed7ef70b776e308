import { AppError } from '../errors.js'
import type { EvaluationOutcome } from '../rules/evaluate.js'
import { type MaskPlan, maskedCounts, Restorer } from '../rules/masking.js'
import type { StreamRelease, ToolCallWatch, WindowVerdict } from '../rules/stream.js'
import type { WardenOutcome } from '../schemas/chat-completions.js'
import type { Evaluation } from '../schemas/evaluations.js'
import {
  type Action,
  addToolCallPieces,
  errorEvent,
  failedIn,
  maskedReply,
  overriddenChunk,
  type ReplyOfChoice,
  relayedFields,
  releasedChunk,
  SSE_DONE,
  type StreamChunk,
  type StreamedCall,
  sseEvent,
  streamedToolCalls,
  type TextField,
  wholeToolCalls,
  withText,
  withToolCalls,
} from './completions.js'

type Json = Record<string, unknown>

/** An evaluation decided and not yet logged: its answer, and what the caller logs it with. */
export type Decided = { answer: Evaluation }

/** What a relay needs from the service that composes it. */
export interface RelayRun<D extends Decided = Decided> {
  /** The input's evaluation, logged with the output's (or alone, when the stream fails first). */
  inputDecided: D
  /** The release decision for the reply (src/rules/stream.ts). */
  release: StreamRelease
  /** The detectors' watch over the reply's tool-call arguments: a call that can only fail stops the stream early. */
  toolCalls: ToolCallWatch
  /** Some enforced output rule holds text back: what would spell it (log probabilities) is not relayed. */
  guarding: boolean
  /** Aborts the upstream call when the stream stops early, though a chunk is being waited for. */
  halt: AbortController
  /** The output evaluation of the whole reply: its text and its tool calls (not logged). */
  evaluateOutput(reply: ReplyOfChoice): Promise<D>
  log(decided: D[]): Promise<void>
  /** Told of each upstream chunk as it arrives (its usage, for the upstream call's span). */
  upstreamChunk?(chunk: Json): void
  /** The relay is done with the upstream: it ended, failed or was stopped. */
  upstreamEnded?(): void
  /**
   * Masking (docs/masking.md): the input's placeholders to put back into the reply and what the
   * input masked, the reply's index in the evaluated conversation, and the plan of an output
   * evaluation (what its mask rules found in the reply).
   */
  masking?: {
    values: ReadonlyMap<string, string>
    counts: Record<string, number>
    index: number
    planOf(decided: D): MaskPlan | null
  }
}

/** What handling one upstream chunk led to: on to the next, or the stream has ended. */
type Next = 'next' | 'ended'

/**
 * The relay of a released stream (docs/chat-completions.md, "Streaming"): reads the upstream's
 * chunks and, beside them, the verdicts of the windows being scored; hands the reply's text to
 * the release decision (`StreamRelease`); writes what it releases as chunks in OpenAI's format
 * (src/proxy/completions.ts). At the reply's end (`endOfReply`), the whole text received is
 * evaluated and logged, once. A failure after the first event ends the stream with an error
 * event (Warden's) or without [DONE] (the client went away).
 */
export class StreamRelay<D extends Decided = Decided> {
  /** The chunk after the choice finished (its finish, then usage): held until the next one, so that the last before [DONE] carries Warden's outcome. */
  private held: Json | null = null
  /** The stream's id, created and model, for chunks Warden writes itself (and, once decided, `warden`). */
  private envelope: Json = {}
  private finished = false
  private logged = false
  /** The text field of the reply: where text released between chunks goes. */
  private textField: TextField = 'content'
  private whole: Promise<D> | null = null
  /** The reply's tool calls as received so far, by their index. */
  private readonly calls = new Map<number, StreamedCall>()
  /** The reply calls a function in OpenAI's deprecated shape (`function_call`), read as call 0. */
  private legacyCall = false
  /** The upstream's next chunk, being waited for beside a window's verdict. */
  private waiting: Promise<IteratorResult<StreamChunk>> | null = null
  /** Puts the input's placeholders back into the text released (held while one may be coming). */
  private readonly restorer: Restorer
  /** The whole reply's output evaluation, once it passed: its mask rules' plan for the tool calls. */
  private outputPlan: MaskPlan | null = null

  constructor(
    private readonly run: RelayRun<D>,
    private readonly chunks: AsyncGenerator<StreamChunk>,
  ) {
    this.restorer = new Restorer(run.masking?.values ?? new Map())
  }

  /** The events of the stream, from the upstream's first chunk (already received) on. */
  async *events(first: IteratorResult<StreamChunk>): AsyncGenerator<string> {
    try {
      let step: IteratorResult<StreamChunk> | { verdict: WindowVerdict } = first
      for (;;) {
        if ('verdict' in step) {
          const settled = this.run.release.settle(step.verdict)
          if (typeof settled !== 'string') return yield* this.stop(settled)
          const text = this.restorer.push(settled)
          if (text !== '') yield sseEvent(releasedChunk(this.envelope, this.textField, text))
        } else if (step.done) break
        else if ((yield* this.chunk(step.value)) === 'ended') return
        step = await this.nextStep()
      }
      yield* this.complete()
    } catch (error) {
      if (!this.logged) await this.run.log([this.run.inputDecided]).catch(() => undefined)
      // The client went away (nobody reads on), or Warden failed: the stream ends without [DONE].
      if (error instanceof AppError) yield errorEvent(error.code, error.detail)
    } finally {
      this.run.halt.abort()
      await this.chunks.return(undefined)
      this.run.upstreamEnded?.()
    }
  }

  /** The upstream's next chunk, or the verdict of the window being scored if it comes first. */
  private async nextStep(): Promise<IteratorResult<StreamChunk> | { verdict: WindowVerdict }> {
    if (this.waiting === null) {
      this.waiting = this.chunks.next()
      // Raced against a window's verdict: a stream that stops first must not leave it unhandled.
      this.waiting.catch(() => undefined)
    }
    const waiting = this.waiting
    const scoring = this.run.release.scoring
    const first = await (scoring === null
      ? waiting.then((chunk) => ({ chunk }))
      : Promise.race([waiting.then((chunk) => ({ chunk })), scoring.then((verdict) => ({ verdict }))]))
    if ('verdict' in first) return first
    this.waiting = null
    return first.chunk
  }

  /** Relays one upstream chunk: its text as the rules release it, the rest as it came. */
  private async *chunk({ raw, chunk }: StreamChunk): AsyncGenerator<string, Next> {
    this.run.upstreamChunk?.(chunk)
    const { choices: _, usage: __, warden: ___, ...rest } = chunk
    if (!('object' in this.envelope)) this.envelope = { ...rest, object: 'chat.completion.chunk' }
    const choices = chunk.choices as Json[]
    const found = choices.find((c) => c.index === 0)
    if (found === undefined) {
      // Another choice's text, from an upstream asked for one (n is 1 here): never relayed.
      if (choices.length > 0) return 'next'
      // Usage, or a prompt filter's results: in order, held once the choice finished.
      if (this.finished) {
        if (this.held) yield sseEvent(this.held)
        this.held = chunk
      } else yield `data: ${raw}\n\n`
      return 'next'
    }
    // Its log probabilities spell the tokens held back: they go only where nothing is held.
    const choice = this.run.guarding ? { ...found, logprobs: null } : found
    let delta = relayedFields(
      (typeof choice.delta === 'object' && choice.delta !== null ? choice.delta : {}) as Json,
    )
    // Tool calls are output too, and an agent runs a call it receives: nothing of one (id, name,
    // arguments) is sent before the whole reply passed; then each call goes out whole
    // (`endOfReply`). Pieces after the choice finished were read by no evaluation: never relayed.
    const calling = delta.tool_calls !== undefined || delta.function_call !== undefined
    if (calling) {
      if (!this.finished && this.watchToolCalls(delta)) {
        yield* this.stop(null)
        return 'ended'
      }
      const { function_call: _, ...rest } = withToolCalls(delta, [])
      delta = rest
    }
    // Content and a refusal beside it are both the reply's text: both are read, in that order.
    const texts = [delta.content, delta.refusal].filter((t): t is string => typeof t === 'string')
    const field =
      typeof delta.content === 'string' ? 'content' : typeof delta.refusal === 'string' ? 'refusal' : null
    let released = ''
    if (field !== null) {
      this.textField = field
      const pushed = this.run.release.push(texts.join(''))
      if (pushed.violation) {
        yield* this.stop(null)
        return 'ended'
      }
      released = this.restorer.push(pushed.release)
    }
    if (typeof choice.finish_reason === 'string' && !this.finished) {
      this.finished = true
      const end = await this.endOfReply()
      if ('stop' in end) {
        yield* this.stop(end.stop)
        return 'ended'
      }
      this.envelope = { ...this.envelope, warden: this.outcome('allow', end.output) }
      const ended = this.withWholeCalls(delta)
      const rest = this.restorer.push(end.release) + this.restorer.end()
      this.held = {
        ...chunk,
        choices: [
          {
            ...choice,
            delta: withText(ended, field ?? (rest !== '' ? this.textField : null), released + rest),
          },
        ],
      }
      return 'next'
    }
    if (field === null) {
      // A delta of tool-call pieces all held back says nothing yet.
      if (calling && Object.keys(delta).length === 0) return 'next'
      if (this.held) yield sseEvent(this.held)
      this.held = null
      yield sseEvent({ ...chunk, choices: [{ ...choice, delta }] })
    } else if (released !== '' || Object.keys(delta).some((k) => k !== 'content' && k !== 'refusal'))
      yield sseEvent({ ...chunk, choices: [{ ...choice, delta: withText(delta, field, released) }] })
    return 'next'
  }

  /** The upstream's [DONE]: the reply ends (if no finish reason ended it), then the last chunk with Warden's outcome. */
  private async *complete(): AsyncGenerator<string> {
    if (!this.finished) {
      // [DONE] without a finish reason: the reply is complete as it stands.
      const end = await this.endOfReply()
      if ('stop' in end) return yield* this.stop(end.stop)
      const rest = this.restorer.push(end.release) + this.restorer.end()
      if (rest !== '') yield sseEvent(releasedChunk(this.envelope, this.textField, rest))
      if (this.calls.size > 0) yield sseEvent(releasedChunkWith(this.envelope, this.withWholeCalls({})))
      this.envelope = { ...this.envelope, warden: this.outcome('allow', end.output) }
    }
    const { warden, ...shell } = this.envelope
    yield sseEvent(this.held ? { ...this.held, warden } : { ...shell, choices: [], warden })
    yield SSE_DONE
  }

  /**
   * The reply is complete: the rest the rules release and the whole text's evaluation (run while
   * the last windows are scored), or why the stream stops instead: a detector's finding (null),
   * a window's outcome, or the whole text's evaluation failing.
   */
  private async endOfReply(): Promise<
    { release: string; output: Evaluation } | { stop: EvaluationOutcome | null }
  > {
    const { release } = this.run
    const ended = release.end()
    if (ended.violation) return { stop: null }
    if (this.run.toolCalls.end()) return { stop: null }
    const deciding = this.decide()
    const drained = await release.drain()
    if (typeof drained !== 'string') return { stop: drained }
    const decided = await deciding
    const output = decided.answer
    if (output.action !== 'allow' && output.action !== 'mask') return { stop: null }
    this.outputPlan = this.run.masking?.planOf(decided) ?? null
    return { release: ended.release + drained, output }
  }

  /**
   * Adds a delta's tool-call pieces (or its deprecated `function_call`, read as call 0) to the
   * calls received, and hands their arguments to the detectors' watch: true when a detector is
   * already sure a call fails.
   */
  private watchToolCalls(delta: Json): boolean {
    let pieces: unknown = delta.tool_calls
    if (typeof delta.function_call === 'object' && delta.function_call !== null) {
      this.legacyCall = true
      pieces = [{ index: 0, function: delta.function_call }]
    }
    addToolCallPieces(this.calls, pieces)
    if (!Array.isArray(pieces)) return false
    for (const piece of pieces as Json[]) {
      const fn = piece.function as Json | undefined
      const args = fn?.arguments
      if (typeof args === 'string' && args !== '' && this.run.toolCalls.push(piece.index as number, args))
        return true
    }
    return false
  }

  /**
   * A delta with every call of the reply, each whole (one piece per call), as the upstream's shape
   * has them: an output mask rule's findings in their arguments replaced by `[KIND]`, the input's
   * placeholders put back (docs/masking.md).
   */
  private withWholeCalls(delta: Json): Json {
    if (this.calls.size === 0) return delta
    const masking = this.run.masking
    let calls: ReadonlyMap<number, StreamedCall> = this.calls
    if (masking && (this.outputPlan !== null || masking.values.size > 0)) {
      const order = [...this.calls.keys()].sort((a, b) => a - b)
      const masked = maskedReply(
        { text: null, toolCalls: streamedToolCalls(this.calls) },
        { plan: this.outputPlan, index: masking.index, values: masking.values },
      )
      const next = new Map<number, StreamedCall>()
      order.forEach((key, i) => {
        const call = this.calls.get(key) as StreamedCall
        const args = masked.toolCalls[i]?.function?.arguments
        next.set(key, { ...call, arguments: typeof args === 'string' ? args : call.arguments })
      })
      calls = next
    }
    if (this.legacyCall) {
      const call = calls.get(0)
      return call === undefined
        ? delta
        : { ...delta, function_call: { name: call.name ?? '', arguments: call.arguments } }
    }
    return withToolCalls(delta, wholeToolCalls(calls))
  }

  /** Evaluates and logs the whole text received: the stream's output evaluation, once (of the text received when first asked). */
  private decide(): Promise<D> {
    if (this.whole === null) {
      const reply: ReplyOfChoice = {
        text: this.run.release.received,
        toolCalls: streamedToolCalls(this.calls),
      }
      this.whole = (async () => {
        const output = await this.run.evaluateOutput(reply)
        await this.run.log([this.run.inputDecided, output])
        this.logged = true
        return output
      })()
      // Awaited by whoever asked; a stream that stops first must not leave it unhandled.
      this.whole.catch(() => undefined)
    }
    return this.whole
  }

  /**
   * The end of a stream that failed (a detector's finding: `failed` null; a window's outcome):
   * the override in place of the rest.
   */
  private async *stop(failed: EvaluationOutcome | null): AsyncGenerator<string> {
    this.run.halt.abort()
    await this.chunks.return(undefined)
    const output = (await this.decide()).answer
    // The rules stopped the stream; the whole-text evaluation agrees (the property test's claim
    // for detectors; a scored window's verdict is the rule's for the stream, whatever the whole
    // text scores).
    let action: Action = output.action
    let override = output.override_response
    let why = output
    if (action === 'allow') {
      action = failed === null ? 'block' : failed.action
      override = failed === null ? null : failed.override_response
      // The window's verdict stopped the stream: its failing rules are the reason.
      if (failed !== null) why = { ...output, policies: failed.policies }
    }
    if (this.held) yield sseEvent(this.held)
    yield sseEvent(overriddenChunk(this.envelope, override, this.outcome(action, output, why)))
    yield SSE_DONE
  }

  private outcome(
    action: Action,
    output: Evaluation,
    why: Pick<Evaluation, 'policies'> = output,
  ): WardenOutcome {
    const input = this.run.inputDecided.answer
    // What was masked: in the conversation sent upstream, and by output mask rules in the reply.
    const counts: Record<string, number> = { ...(this.run.masking?.counts ?? {}) }
    if (action === 'allow' && this.outputPlan)
      for (const [kind, n] of Object.entries(maskedCounts(this.outputPlan)))
        counts[kind] = (counts[kind] ?? 0) + n
    const masked = action === 'allow' && Object.keys(counts).length > 0
    return {
      action: masked ? 'mask' : action,
      input_evaluation_id: input.id,
      output_evaluation_id: output.id,
      output_evaluation_ids: [output.id],
      ...(masked ? { masked: counts } : {}),
      failed: action === 'allow' ? [] : failedIn('output', output.id, 0, why),
    }
  }
}

/** A chunk of its own for choice 0 with this delta, under the stream's envelope. */
function releasedChunkWith(envelope: Json, delta: Json): Json {
  return { ...envelope, choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] }
}
