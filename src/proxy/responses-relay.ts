import { AppError } from '../errors.js'
import type { EvaluationOutcome } from '../rules/evaluate.js'
import { type MaskPlan, maskedCounts, Restorer } from '../rules/masking.js'
import type { StreamRelease, ToolCallWatch, WindowVerdict } from '../rules/stream.js'
import type { Evaluation } from '../schemas/evaluations.js'
import type { ToolCall } from '../schemas/messages.js'
import type { Action, ReplyOfChoice, StreamChunk } from './completions.js'
import { itemEvents, maskedResponse, overrideItem, responseReply, TERMINAL_EVENTS } from './responses.js'
import type { Decided } from './stream-relay.js'

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** What a Responses relay needs from the service that composes it. */
export interface ResponsesRelayRun<D extends Decided = Decided> {
  inputDecided: D
  /** The release decision for one text part of the reply (src/rules/stream.ts); a new one per part. */
  release: StreamRelease
  /** Makes the release of the next text part. */
  nextRelease?: () => StreamRelease
  /** The detectors' watch over the reply's function-call arguments. */
  toolCalls: ToolCallWatch
  halt: AbortController
  /** The output evaluation of the whole reply (null: it says nothing to evaluate). */
  evaluateOutput(reply: ReplyOfChoice): Promise<D | null>
  log(decided: D[]): Promise<void>
  masking: {
    values: ReadonlyMap<string, string>
    counts: Record<string, number>
    index: number
    planOf(decided: D): MaskPlan | null
  }
  /** Told of the upstream's final response (its usage, for the upstream call's span). */
  upstreamFinal?(response: Json): void
  /** The relay is done with the upstream: it ended, failed or was stopped (the upstream call's span ends). */
  upstreamEnded?(): void
  /** Warden's outcome for the terminal event's response. */
  outcome(output: Evaluation | null, action: Action, counts: Record<string, number>): Json
}

/** A text part being relayed: its place, its release decision, what of it was sent. */
interface OpenPart {
  output_index: number
  content_index: number
  item_id: unknown
  field: 'text' | 'refusal'
  release: StreamRelease
  restorer: Restorer
  received: string
  sent: string
}

/**
 * The relay of a Responses stream released as it grows (docs/agents.md): OpenAI's events relayed
 * in order, each text part's deltas held back only where an enforced output rule may still flag
 * them (as chat completions' text, src/proxy/stream-relay.ts); a function call's events never
 * sent before the whole reply passed (an agent must never receive half a call it would run):
 * from the first call on, the items are sent whole at the end, rebuilt from the upstream's final
 * response (masked, values put back). A violation ends the stream with the override as a message
 * item and `response.incomplete` (reason content_filter). Warden numbers the events it sends.
 */
export class ResponsesStreamRelay<D extends Decided = Decided> {
  private sequence = 0
  private envelope: Json = {}
  private part: OpenPart | null = null
  private release: StreamRelease
  private readonly texts: string[] = []
  private readonly calls = new Map<number, { id: string; name: string; arguments: string; custom: boolean }>()
  /** The output index of the first function call: from it on, nothing is sent before the reply passed. */
  private holdFrom: number | null = null
  /** What was sent of each message item's parts, by output index and content index. */
  private readonly sentParts = new Map<number, Map<number, string>>()
  /** How many output items the client was told of: the override's place when the stream stops. */
  private itemsSent = 0
  private whole: Promise<D | null> | null = null
  private logged = false
  private waiting: Promise<IteratorResult<StreamChunk>> | null = null

  constructor(
    private readonly run: ResponsesRelayRun<D>,
    private readonly events_: AsyncGenerator<StreamChunk>,
  ) {
    this.release = run.release
  }

  private emit(event: Json): string {
    if (event.type === 'response.output_item.added') this.itemsSent++
    const numbered = { ...event, sequence_number: this.sequence++ }
    return `event: ${String(event.type)}\ndata: ${JSON.stringify(numbered)}\n\n`
  }

  async *events(first: IteratorResult<StreamChunk>): AsyncGenerator<string> {
    try {
      let step: IteratorResult<StreamChunk> | { verdict: WindowVerdict } = first
      for (;;) {
        if ('verdict' in step) {
          const part = this.part
          const settled = this.release.settle(step.verdict)
          if (typeof settled !== 'string') return yield* this.stop(settled)
          if (part) {
            const text = part.restorer.push(settled)
            if (text !== '') yield this.delta(part, text)
          }
        } else if (step.done) break
        else {
          const ended = yield* this.event(step.value.chunk)
          if (ended) return
        }
        step = await this.nextStep()
      }
      // The upstream ended without a terminal event: the reply as it stands.
      yield* this.finish(null)
    } catch (error) {
      if (!this.logged) await this.run.log([this.run.inputDecided]).catch(() => undefined)
      if (error instanceof AppError)
        yield this.emit({ type: 'error', code: error.code, message: error.detail, param: null })
    } finally {
      this.run.halt.abort()
      await this.events_.return(undefined)
      this.run.upstreamEnded?.()
    }
  }

  private async nextStep(): Promise<IteratorResult<StreamChunk> | { verdict: WindowVerdict }> {
    if (this.waiting === null) {
      this.waiting = this.events_.next()
      this.waiting.catch(() => undefined)
    }
    const waiting = this.waiting
    const scoring = this.part ? this.release.scoring : null
    const first = await (scoring === null
      ? waiting.then((chunk) => ({ chunk }))
      : Promise.race([waiting.then((chunk) => ({ chunk })), scoring.then((verdict) => ({ verdict }))]))
    if ('verdict' in first) return first
    this.waiting = null
    return first.chunk
  }

  private delta(part: OpenPart, text: string): string {
    part.sent += text
    return this.emit({
      type: part.field === 'text' ? 'response.output_text.delta' : 'response.refusal.delta',
      item_id: part.item_id,
      output_index: part.output_index,
      content_index: part.content_index,
      delta: text,
      ...(part.field === 'text' ? { logprobs: [] } : {}),
    })
  }

  /** Handles one upstream event: true when the stream has ended. */
  private async *event(event: Json): AsyncGenerator<string, boolean> {
    const type = String(event.type)
    const { sequence_number: _, ...rest } = event
    if (type === 'response.created' && isObject(event.response)) this.envelope = event.response
    if (TERMINAL_EVENTS.has(type)) {
      if (isObject(event.response)) this.run.upstreamFinal?.(event.response)
      yield* this.finish(isObject(event.response) ? event.response : null, type)
      return true
    }
    const index = typeof event.output_index === 'number' ? event.output_index : null
    if (type === 'response.output_item.added' && index !== null) {
      const item = isObject(event.item) ? event.item : {}
      if (item.type === 'function_call' || item.type === 'custom_tool_call') {
        this.calls.set(index, {
          id: String(item.call_id ?? item.id ?? ''),
          name: String(item.name ?? ''),
          arguments: String(item.arguments ?? item.input ?? ''),
          custom: item.type === 'custom_tool_call',
        })
        if (this.holdFrom === null) this.holdFrom = index
      }
    }
    const holding = this.holdFrom !== null && index !== null && index >= this.holdFrom
    if (
      (type === 'response.function_call_arguments.delta' ||
        type === 'response.custom_tool_call_input.delta') &&
      index !== null
    ) {
      const call = this.calls.get(index)
      const piece = typeof event.delta === 'string' ? event.delta : ''
      if (call) call.arguments += piece
      if (piece !== '' && this.run.toolCalls.push(index, piece)) {
        yield* this.stop(null)
        return true
      }
      return false
    }
    if (type === 'response.content_part.added' && index !== null && isObject(event.part)) {
      const field =
        event.part.type === 'output_text' ? 'text' : event.part.type === 'refusal' ? 'refusal' : null
      if (field !== null) {
        // Parts after the first are read after a line break, as the whole reply's text is.
        if (this.texts.length > 0) this.texts.push('\n')
        if (this.part !== null || this.texts.length > 0)
          this.release = this.run.nextRelease?.() ?? this.release
        this.part = {
          output_index: index,
          content_index: Number(event.content_index ?? 0),
          item_id: event.item_id,
          field,
          release: this.release,
          restorer: new Restorer(this.run.masking.values),
          received: '',
          sent: '',
        }
        this.texts.push('')
      }
    }
    if ((type === 'response.output_text.delta' || type === 'response.refusal.delta') && this.part) {
      const piece = typeof event.delta === 'string' ? event.delta : ''
      this.part.received += piece
      this.texts[this.texts.length - 1] = this.part.received
      const pushed = this.release.push(piece)
      if (pushed.violation) {
        yield* this.stop(null)
        return true
      }
      if (!holding) {
        const text = this.part.restorer.push(pushed.release)
        if (text !== '') yield this.delta(this.part, text)
      }
      return false
    }
    if ((type === 'response.output_text.done' || type === 'response.refusal.done') && this.part) {
      const part = this.part
      const ended = this.release.end()
      if (ended.violation) {
        yield* this.stop(null)
        return true
      }
      const drained = await this.release.drain()
      if (typeof drained !== 'string') {
        yield* this.stop(drained)
        return true
      }
      this.part = null
      if (holding) return false
      const text = part.restorer.push(ended.release + drained) + part.restorer.end()
      if (text !== '') yield this.delta(part, text)
      let parts = this.sentParts.get(part.output_index)
      if (!parts) {
        parts = new Map()
        this.sentParts.set(part.output_index, parts)
      }
      parts.set(part.content_index, part.sent)
      yield this.emit({ ...rest, [part.field]: part.sent })
      return false
    }
    if (holding) return false
    if (type === 'response.content_part.done' && index !== null && isObject(event.part)) {
      const sent = this.sentParts.get(index)?.get(Number(event.content_index ?? 0))
      const field = event.part.type === 'refusal' ? 'refusal' : 'text'
      yield this.emit(sent === undefined ? rest : { ...rest, part: { ...event.part, [field]: sent } })
      return false
    }
    if (type === 'response.output_item.done' && index !== null && isObject(event.item)) {
      const sent = this.sentParts.get(index)
      const item = event.item
      if (sent && Array.isArray(item.content)) {
        const content = (item.content as Json[]).map((part, p) => {
          const text = sent.get(p)
          if (text === undefined) return part
          return { ...part, [part.type === 'refusal' ? 'refusal' : 'text']: text }
        })
        yield this.emit({ ...rest, item: { ...item, content } })
      } else yield this.emit(rest)
      return false
    }
    yield this.emit(rest)
    return false
  }

  /** What was received so far, as an output evaluation reads it. */
  private received(): ReplyOfChoice {
    const text = this.texts.length === 0 ? null : this.texts.join('')
    const toolCalls: ToolCall[] = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, c]) =>
        c.custom
          ? { id: c.id, type: 'custom', custom: { name: c.name, input: c.arguments } }
          : { id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } },
      )
    return { text, toolCalls }
  }

  /** Evaluates and logs the reply (the final response's, or what was received), once. */
  private decide(reply: ReplyOfChoice): Promise<D | null> {
    if (this.whole === null) {
      this.whole = (async () => {
        const output = await this.run.evaluateOutput(reply)
        await this.run.log(output === null ? [this.run.inputDecided] : [this.run.inputDecided, output])
        this.logged = true
        return output
      })()
      this.whole.catch(() => undefined)
    }
    return this.whole
  }

  /**
   * The reply is complete: the last part's rest, the whole reply's evaluation, then the items held
   * since the first call (whole, masked, values put back) and the terminal event with `warden`.
   */
  private async *finish(final: Json | null, type = 'response.completed'): AsyncGenerator<string> {
    if (this.run.toolCalls.end()) return yield* this.stop(null)
    const part = this.part
    let rest = ''
    if (part) {
      const ended = this.release.end()
      if (ended.violation) return yield* this.stop(null)
      const drained = await this.release.drain()
      if (typeof drained !== 'string') return yield* this.stop(drained)
      rest = part.restorer.push(ended.release + drained) + part.restorer.end()
    }
    const response: Json = final ?? { ...this.envelope, status: 'completed', output: [] }
    const reply = final ? responseReply(final) : this.received()
    const decided = await this.decide(reply)
    const output = decided?.answer ?? null
    if (output !== null && output.action !== 'allow' && output.action !== 'mask')
      return yield* this.stop(null)
    if (part && rest !== '' && (this.holdFrom === null || part.output_index < this.holdFrom))
      yield this.delta(part, rest)
    const plan = decided ? this.run.masking.planOf(decided) : null
    const masked = maskedResponse(response, {
      plan,
      index: this.run.masking.index,
      values: this.run.masking.values,
    })
    const items = Array.isArray(masked.output) ? (masked.output as Json[]) : []
    if (this.holdFrom !== null)
      for (let i = this.holdFrom; i < items.length; i++)
        for (const event of itemEvents(items[i] as Json, i)) yield this.emit(event)
    const counts = { ...this.run.masking.counts }
    if (plan)
      for (const [kind, n] of Object.entries(maskedCounts(plan))) counts[kind] = (counts[kind] ?? 0) + n
    yield this.emit({ type, response: { ...masked, warden: this.run.outcome(output, 'allow', counts) } })
  }

  /** The end of a stream that failed: the override as a message item, then response.incomplete. */
  private async *stop(failed: EvaluationOutcome | null): AsyncGenerator<string> {
    this.run.halt.abort()
    await this.events_.return(undefined)
    const decided = await this.decide(this.received())
    const output = decided?.answer ?? null
    let action: Action = output?.action ?? 'allow'
    let override = output?.override_response ?? null
    let why: Evaluation | null = output
    if (action === 'allow' || action === 'mask') {
      action = failed === null ? 'block' : failed.action
      override = failed === null ? null : failed.override_response
      if (failed !== null && output !== null) why = { ...output, policies: failed.policies }
    }
    const item = overrideItem(override ?? '')
    for (const event of itemEvents(item, this.itemsSent)) yield this.emit(event)
    yield this.emit({
      type: 'response.incomplete',
      response: {
        ...this.envelope,
        status: 'incomplete',
        incomplete_details: { reason: 'content_filter' },
        output: [item],
        ...('output_text' in this.envelope ? { output_text: override ?? '' } : {}),
        warden: this.run.outcome(why, action, {}),
      },
    })
  }
}
