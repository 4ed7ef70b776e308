/**
 * Traces (docs/tracing.md): spans over OTLP/HTTP, configured by OpenTelemetry's standard
 * variables (read into Config.tracing) and off unless one names where to send them. Off, every
 * helper here calls its function and nothing else: no span, no context, no allocation beyond the
 * call. On, every span leaves through `RedactingSpanProcessor` (redaction.ts): only listed
 * attributes, capped and cleaned, and no error's message.
 *
 * Spans follow OpenTelemetry's GenAI conventions (`gen_ai.operation.name`, `gen_ai.provider.name`,
 * `gen_ai.request.model`, `gen_ai.usage.*`); the guardrail attributes of the open proposal
 * (`gen_ai.guardrail.*`) are set only with TRACING_GUARDRAIL_ATTRIBUTES=true, until they are
 * stable.
 */
import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import type { TracingConfig } from '../config.js'
import { inputMessages, messagesJson, ReplyAssembler } from './content.js'
import { errorType, exceptionFrames, RedactingSpanProcessor } from './redaction.js'

export type { Span } from '@opentelemetry/api'

interface Active {
  tracer: Tracer
  guardrail: boolean
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: model calls' messages are recorded. */
  content: boolean
}
let active: Active | null = null

/** Started tracing: flushes and stops it. */
export interface Telemetry {
  /** Sends the spans ended so far. */
  flush(): Promise<void>
  /** Sends what is left, then stops tracing. */
  shutdown(): Promise<void>
}

/** Starts tracing as the configuration asks (Config.tracing); null when it is off. */
export function startTelemetry(settings: TracingConfig | null): Telemetry | null {
  if (settings === null) return null
  const exporter = new OTLPTraceExporter({ url: settings.url })
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    spanProcessors: [
      new RedactingSpanProcessor(new BatchSpanProcessor(exporter), settings.captureMessageContent),
    ],
  })
  const contextManager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(contextManager)
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  trace.setGlobalTracerProvider(provider)
  active = {
    tracer: provider.getTracer('warden'),
    guardrail: settings.guardrailAttributes,
    content: settings.captureMessageContent,
  }
  return {
    flush: () => provider.forceFlush(),
    async shutdown() {
      active = null
      await provider.shutdown()
      trace.disable()
      propagation.disable()
      context.disable()
    },
  }
}

/** Whether spans are being recorded. */
export const tracingOn = (): boolean => active !== null

/** Whether the `gen_ai.guardrail.*` attributes are set. */
export const guardrailAttributesOn = (): boolean => active?.guardrail === true

/**
 * Marks a span failed by `error`: `error.type` and an `exception` event say what the error is
 * (its code or class, and where it was thrown), never what its message says; the status has no
 * description. (The redaction at export drops any message that reaches a span otherwise.)
 */
export function recordFailure(span: Span, error: unknown): void {
  const type = errorType(error)
  span.setAttribute('error.type', type)
  const frames = exceptionFrames(error)
  span.addEvent('exception', {
    'exception.type': type,
    ...(frames ? { 'exception.stacktrace': frames } : {}),
  })
  span.setStatus({ code: SpanStatusCode.ERROR })
}

/**
 * Runs `fn` in a span named `name` under the active span (or `parent`), ending it when `fn`
 * returns or settles; an error thrown or rejected marks the span as failed and is passed on.
 * Off, it is `fn(undefined)`.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span | undefined) => T,
  options: { kind?: SpanKind; parent?: Context } = {},
): T {
  if (active === null) return fn(undefined)
  const parent = options.parent ?? context.active()
  const span = active.tracer.startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes }, parent)
  const failed = (error: unknown) => {
    recordFailure(span, error)
    span.end()
  }
  let result: T
  try {
    result = context.with(trace.setSpan(parent, span), () => fn(span))
  } catch (error) {
    failed(error)
    throw error
  }
  if (result instanceof Promise)
    return result.then(
      (value) => {
        span.end()
        return value
      },
      (error: unknown) => {
        failed(error)
        throw error
      },
    ) as T
  span.end()
  return result
}

/** GenAI attributes of a model call (OpenTelemetry's GenAI conventions). */
export interface ModelCall {
  /** `chat` for chat completions. */
  operation: string
  /** The provider: the application's `provider`, or `openai` for an OpenAI-compatible judge. */
  provider: string
  model: string
  /** The messages sent (an OpenAI `messages` list): recorded only when content capture is on. */
  input?: unknown
}

/**
 * A span over a model call, as the GenAI conventions name it (`{operation} {model}`, kind
 * client): the guarded chat completion's upstream call, a judge's or a guard's call. Set the
 * answer's usage with `recordUsage`, and its messages with `recordOutput` or `outputCapture`.
 * With content capture on, the messages sent are `gen_ai.input.messages`.
 */
export function modelCallSpan<T>(call: ModelCall, fn: (span: Span | undefined) => T): T {
  if (active === null) return fn(undefined)
  const attributes: Attributes = {
    'gen_ai.operation.name': call.operation,
    'gen_ai.provider.name': call.provider,
    'gen_ai.request.model': call.model,
  }
  const content = active.content && call.input !== undefined
  return inSpan(
    `${call.operation} ${call.model}`,
    attributes,
    (span) => {
      // Put together only for a span that records (sampled in).
      if (content && span?.isRecording())
        span.setAttribute('gen_ai.input.messages', messagesJson(inputMessages(call.input), 'last'))
      return fn(span)
    },
    { kind: SpanKind.CLIENT },
  )
}

/**
 * A model's reply, put together as it comes, for its call's span (`gen_ai.output.messages`);
 * null unless content capture is on and the call has a recording span. `end` records it.
 */
export function outputCapture(span: Span | undefined): { add(answer: unknown): void; end(): void } | null {
  if (span === undefined || active?.content !== true || !span.isRecording()) return null
  const reply = new ReplyAssembler()
  return {
    add: (answer) => reply.add(answer),
    end: () => span.setAttribute('gen_ai.output.messages', messagesJson(reply.messages(), 'first')),
  }
}

/** A model's reply (a chat completion, or a stream's chunks) on its call's span: see `outputCapture`. */
export function recordOutput(span: Span | undefined, answers: readonly unknown[]): void {
  const capture = outputCapture(span)
  if (capture === null) return
  for (const answer of answers) capture.add(answer)
  capture.end()
}

/** An OpenAI `usage` object's tokens, and the model that answered, on a model call's span. */
export function recordUsage(
  span: Span | undefined,
  usage:
    | {
        prompt_tokens?: unknown
        completion_tokens?: unknown
        input_tokens?: unknown
        output_tokens?: unknown
      }
    | null
    | undefined,
  responseModel?: unknown,
): void {
  if (span === undefined) return
  // Chat Completions count prompt and completion tokens; the Responses API input and output tokens.
  const input = usage?.prompt_tokens ?? usage?.input_tokens
  const output = usage?.completion_tokens ?? usage?.output_tokens
  if (typeof input === 'number') span.setAttribute('gen_ai.usage.input_tokens', input)
  if (typeof output === 'number') span.setAttribute('gen_ai.usage.output_tokens', output)
  if (typeof responseModel === 'string') span.setAttribute('gen_ai.response.model', responseModel)
}

/** What an evaluation span says of its outcome. */
export interface EvaluationOutcomeAttributes {
  id: string
  verdict: string
  action: 'allow' | 'mask' | 'override' | 'block'
  /** The ids of the enforce policies that failed. */
  failedPolicies: readonly string[]
}

/**
 * A span over one evaluation (`warden.evaluation`): the application, what asked (`source`:
 * api, playground, chat_input, chat_output, responses_input, responses_output). End it with `recordEvaluation`.
 */
export function evaluationSpan<T>(
  applicationId: string,
  source: string,
  fn: (span: Span | undefined) => T,
): T {
  if (active === null) return fn(undefined)
  const attributes: Attributes = {
    'warden.application.id': applicationId,
    'warden.evaluation.source': source,
  }
  if (active.guardrail) attributes['gen_ai.operation.name'] = 'apply_guardrail'
  return inSpan('warden.evaluation', attributes, fn)
}

/** The decision `gen_ai.guardrail.decision.type` names for each of Warden's actions. */
const GUARDRAIL_DECISIONS = { allow: 'allow', mask: 'modify', override: 'modify', block: 'deny' } as const

/** An evaluation's outcome on its span; with the switch on, as the guardrail proposal names it. */
export function recordEvaluation(span: Span | undefined, outcome: EvaluationOutcomeAttributes): void {
  if (span === undefined) return
  span.setAttributes({
    'warden.evaluation.id': outcome.id,
    'warden.evaluation.verdict': outcome.verdict,
    'warden.evaluation.action': outcome.action,
  })
  if (active?.guardrail) {
    span.setAttributes({
      'gen_ai.guardrail.name': 'warden',
      'gen_ai.guardrail.decision.type': GUARDRAIL_DECISIONS[outcome.action],
      'gen_ai.guardrail.policy.id': [...outcome.failedPolicies],
    })
  }
}

/**
 * A span over one rule of one policy (`warden.rule`): the policy, the rule's index and type.
 * `fn` is synchronous (a rule evaluated on the event loop): the span is a child of the active one
 * and ends when `fn` returns, without a context of its own (nothing under it makes spans).
 */
export function ruleSpan<T>(
  policyId: string,
  index: number,
  type: string,
  fn: (span: Span | undefined) => T,
): T {
  if (active === null) return fn(undefined)
  const span = active.tracer.startSpan('warden.rule', {
    attributes: { 'warden.policy.id': policyId, 'warden.rule.index': index, 'warden.rule.type': type },
  })
  try {
    return fn(span)
  } catch (error) {
    recordFailure(span, error)
    throw error
  } finally {
    span.end()
  }
}

/** The caller's trace, from its W3C `traceparent` and `tracestate` headers (the root when none). */
export function callerContext(headers: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(ROOT_CONTEXT, headers)
}

/** The methods `http.request.method` names; any other is `_OTHER`, as the HTTP conventions say. */
const HTTP_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE'])

/** `url.path` of a request no route matched: the path it asked for is never recorded. */
export const UNMATCHED_PATH = '{unmatched}'

/**
 * A route's template as the contract writes paths (`/v1/applications/{application_id}`), from
 * Fastify's (`/v1/applications/:application_id`).
 */
export const routePath = (route: string): string => route.replace(/:([A-Za-z0-9_]+)(\([^)]*\))?/g, '{$1}')

/**
 * A server span for one HTTP request (`{method} {route}`), continuing the caller's trace; null
 * when tracing is off. Its `url.path` is the route's template, never the path the client sent
 * (it holds ids, and whatever a client puts in a path that matches no route). `endHttpSpan`
 * ends it with the status.
 */
export function startHttpSpan(
  method: string,
  route: string | undefined,
  headers: Record<string, string | string[] | undefined>,
): { span: Span; context: Context } | null {
  if (active === null) return null
  const parent = callerContext(headers)
  const known = HTTP_METHODS.has(method) ? method : '_OTHER'
  const attributes: Attributes = {
    'http.request.method': known,
    'url.path': route ? routePath(route) : UNMATCHED_PATH,
  }
  if (route) attributes['http.route'] = route
  const span = active.tracer.startSpan(
    route ? `${known} ${route}` : known,
    { kind: SpanKind.SERVER, attributes },
    parent,
  )
  return { span, context: trace.setSpan(parent, span) }
}

/** What a request's span learns as it ends. */
export interface HttpOutcome {
  statusCode: number
  /** The workspace of the key that called, once authenticated. */
  workspaceId?: string | undefined
  /** The error answered, if one was: its code is `error.type` of a 5xx. */
  error?: unknown
}

/** Ends an HTTP request's span with the status it answered (5xx marks it failed) and the caller's workspace. */
export function endHttpSpan(span: Span, outcome: HttpOutcome): void {
  span.setAttribute('http.response.status_code', outcome.statusCode)
  if (outcome.workspaceId) span.setAttribute('warden.workspace.id', outcome.workspaceId)
  if (outcome.statusCode >= 500) {
    span.setAttribute(
      'error.type',
      outcome.error === undefined ? String(outcome.statusCode) : errorType(outcome.error),
    )
    span.setStatus({ code: SpanStatusCode.ERROR })
  }
  span.end()
}

/** Runs `fn` with `traced` (a request's span context, or null when off) as the active context. */
export function withContext<T>(traced: Context | null | undefined, fn: () => T): T {
  return traced ? context.with(traced, fn) : fn()
}

/**
 * An async iterable whose steps run with `traced` as the active context (a released stream's
 * events, made after the handler returned); the iterable itself when tracing is off.
 */
export function iterateInContext<T>(
  traced: Context | null | undefined,
  iterable: AsyncIterable<T>,
): AsyncIterable<T> {
  if (!traced) return iterable
  return {
    [Symbol.asyncIterator]() {
      const iterator = iterable[Symbol.asyncIterator]()
      return {
        next: () => context.with(traced, () => iterator.next()),
        return: (value?: unknown) =>
          context.with(traced, () =>
            iterator.return
              ? iterator.return(value)
              : Promise.resolve({ done: true, value } as IteratorReturnResult<T>),
          ),
      }
    },
  }
}
