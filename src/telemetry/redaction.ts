/**
 * What a span may carry when it leaves Warden (docs/tracing.md, "What spans hold"): every span
 * ended passes through `RedactingSpanProcessor` on its way to the exporter, whoever made it and
 * however, so that a span added later cannot export a conversation's text, a key or an upstream's
 * words by accident. Only the attributes listed here are exported, each text capped and cleaned;
 * an exception is exported as its type, never its message (an upstream's error echoes the prompt,
 * a validation error quotes the pattern it refused, JSON.parse quotes the text it could not read).
 */
import type { Attributes, AttributeValue, Context, SpanContext } from '@opentelemetry/api'
import type { ReadableSpan, Span, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace-base'
import { AppError } from '../errors.js'

/** The most UTF-16 code units of a span's name. */
export const MAX_SPAN_NAME_LENGTH = 128
/** The most UTF-16 code units of an attribute's text, or of each text of a list. */
export const MAX_ATTRIBUTE_LENGTH = 256
/** The most entries of a list attribute. */
export const MAX_LIST_LENGTH = 64
/** The most UTF-16 code units of a captured content attribute (JSON: `gen_ai.input.messages`, …). */
export const MAX_CONTENT_LENGTH = 32_768
/** The most UTF-16 code units of an exception's stack frames. */
const MAX_STACK_LENGTH = 4096

type Kind = 'text' | 'number' | 'boolean' | 'texts' | 'content'

/** The attributes a span may export, and what each holds; any other is dropped. */
const SPAN_ATTRIBUTES: ReadonlyMap<string, Kind> = new Map<string, Kind>([
  ['http.request.method', 'text'],
  ['http.route', 'text'],
  ['url.path', 'text'],
  ['http.response.status_code', 'number'],
  ['error.type', 'text'],
  ['warden.workspace.id', 'text'],
  ['warden.client_gone', 'boolean'],
  ['warden.application.id', 'text'],
  ['warden.evaluation.source', 'text'],
  ['warden.evaluation.id', 'text'],
  ['warden.evaluation.verdict', 'text'],
  ['warden.evaluation.action', 'text'],
  ['warden.policy.id', 'text'],
  ['warden.rule.index', 'number'],
  ['warden.rule.type', 'text'],
  ['gen_ai.operation.name', 'text'],
  ['gen_ai.provider.name', 'text'],
  ['gen_ai.request.model', 'text'],
  ['gen_ai.response.model', 'text'],
  ['gen_ai.usage.input_tokens', 'number'],
  ['gen_ai.usage.output_tokens', 'number'],
  ['gen_ai.guardrail.name', 'text'],
  ['gen_ai.guardrail.decision.type', 'text'],
  ['gen_ai.guardrail.policy.id', 'texts'],
  // Only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
  ['gen_ai.input.messages', 'content'],
  ['gen_ai.output.messages', 'content'],
])

/** The attributes an `exception` event may export: its type and stack frames, never its message. */
const EXCEPTION_ATTRIBUTES: ReadonlySet<string> = new Set(['exception.type', 'exception.stacktrace'])

/**
 * What is replaced by U+FFFD: control characters (a line break forged into a log line), the
 * bidirectional overrides (text that reads other than it is), and lone surrogates (not UTF-8:
 * with the `u` flag, \p{Cs} matches a surrogate only when it is not half of a pair).
 */
const UNSAFE = /[\p{Cc}\p{Cs}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu
/** The same, to test: most texts hold none, and are then kept as they are. */
const HAS_UNSAFE = /[\p{Cc}\p{Cs}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u

/** `text` cut to `max` code units, `…` last when cut (never half a surrogate pair). */
function capped(text: string, max: number): string {
  if (text.length <= max) return text
  let end = max - 1
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return `${text.slice(0, end)}…`
}

/** A text as a span may hold it: unsafe characters replaced, at most `max` code units. */
export function safeText(text: string, max = MAX_ATTRIBUTE_LENGTH): string {
  // Cut first (it keeps surrogate pairs whole): each replacement is one code unit for one.
  const cut = capped(text, max)
  return HAS_UNSAFE.test(cut) ? cut.replace(UNSAFE, '\uFFFD') : cut
}

/** An attribute's value as its kind allows, or undefined to drop it. */
function safeValue(
  kind: Kind,
  value: AttributeValue | undefined,
  content: boolean,
): AttributeValue | undefined {
  switch (kind) {
    case 'text':
      return typeof value === 'string' ? safeText(value) : undefined
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? value : undefined
    case 'boolean':
      return typeof value === 'boolean' ? value : undefined
    case 'texts':
      return Array.isArray(value)
        ? value
            .slice(0, MAX_LIST_LENGTH)
            .filter((v): v is string => typeof v === 'string')
            .map((v) => safeText(v))
        : undefined
    case 'content':
      // Valid JSON made by content.ts within the cap; cut (and no longer JSON) only if not.
      return content && typeof value === 'string' ? capped(value, MAX_CONTENT_LENGTH) : undefined
  }
}

/** The allowed attributes of `attributes`, made safe; `dropped` counts the others. */
function safeAttributes(
  attributes: Attributes,
  allowed: (key: string) => Kind | undefined,
  content: boolean,
): { attributes: Attributes; dropped: number } {
  const safe: Attributes = {}
  let dropped = 0
  for (const [key, value] of Object.entries(attributes)) {
    const kind = allowed(key)
    const made = kind === undefined ? undefined : safeValue(kind, value, content)
    if (made === undefined) dropped++
    else safe[key] = made
  }
  return { attributes: safe, dropped }
}

/** Only the lines of a stack that name a frame (`    at f (file:1:2)`): the message is left out. */
function stackFrames(stack: string): string {
  const frames = stack.split('\n').filter((line) => /^\s+at /.test(line))
  return safeFrames(frames.join('\n'))
}
const safeFrames = (frames: string) => capped(frames.replace(/[^\n\x20-\x7e]/g, '\uFFFD'), MAX_STACK_LENGTH)

/** An `exception` event with its type and stack frames; any other event is dropped. */
function safeEvent(event: TimedEvent): TimedEvent | null {
  if (event.name !== 'exception') return null
  const attributes: Attributes = {}
  const type = event.attributes?.['exception.type']
  attributes['exception.type'] = typeof type === 'string' ? safeType(type) : '_OTHER'
  const stack = event.attributes?.['exception.stacktrace']
  if (typeof stack === 'string') {
    const frames = stackFrames(stack)
    if (frames) attributes['exception.stacktrace'] = frames
  }
  const dropped = Object.keys(event.attributes ?? {}).filter((key) => !EXCEPTION_ATTRIBUTES.has(key)).length
  return {
    time: event.time,
    name: event.name,
    attributes,
    droppedAttributesCount: (event.droppedAttributesCount ?? 0) + dropped,
  }
}

/** A type's name as an exception's type or `error.type` may say it: an identifier, or `_OTHER`. */
const safeType = (name: string) => (/^[A-Za-z_][A-Za-z0-9_.]{0,63}$/.test(name) ? name : '_OTHER')

/**
 * What an error is, without a word of what it says (`error.type`, `exception.type`): an
 * AppError's code (`upstream_error`, `validation_error`), a system error's code
 * (`ECONNREFUSED`), or its class's name (`TypeError`).
 */
export function errorType(error: unknown): string {
  if (error instanceof AppError) return error.code
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string' && /^E[A-Z0-9_]{1,40}$/.test(code)) return code
  return error instanceof Error ? safeType(error.name) : '_OTHER'
}

/** An error's stack frames, without its message (empty when it has none). */
export const exceptionFrames = (error: unknown): string =>
  error instanceof Error && typeof error.stack === 'string' ? stackFrames(error.stack) : ''

/**
 * The span as it may leave Warden: its name capped and cleaned, only the listed attributes (the
 * content ones only when `content`), only `exception` events and those without a message, its
 * status without a description, links without attributes.
 */
export function redactedSpan(span: ReadableSpan, content: boolean): ReadableSpan {
  const { attributes, dropped } = safeAttributes(span.attributes, (key) => SPAN_ATTRIBUTES.get(key), content)
  const events = span.events.map(safeEvent).filter((e): e is TimedEvent => e !== null)
  const context: SpanContext = span.spanContext()
  return {
    name: safeText(span.name, MAX_SPAN_NAME_LENGTH),
    kind: span.kind,
    spanContext: () => context,
    ...(span.parentSpanContext ? { parentSpanContext: span.parentSpanContext } : {}),
    startTime: span.startTime,
    endTime: span.endTime,
    status: { code: span.status.code },
    attributes,
    links: span.links.map((link) => ({ context: link.context })),
    events,
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount + dropped,
    droppedEventsCount: span.droppedEventsCount + span.events.length - events.length,
    droppedLinksCount: span.droppedLinksCount,
  }
}

/**
 * A span processor that hands `next` each ended span as `redactedSpan` makes it: the one way out
 * of Warden for every span.
 */
export class RedactingSpanProcessor implements SpanProcessor {
  constructor(
    private readonly next: SpanProcessor,
    /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: content attributes are kept. */
    private readonly content: boolean,
  ) {}

  onStart(span: Span, parentContext: Context): void {
    this.next.onStart(span, parentContext)
  }

  onEnd(span: ReadableSpan): void {
    this.next.onEnd(redactedSpan(span, this.content))
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush()
  }

  shutdown(): Promise<void> {
    return this.next.shutdown()
  }
}
