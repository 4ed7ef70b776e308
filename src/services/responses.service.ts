import type { Clock } from '../clock.js'
import type { Config, ProviderUpstream } from '../config.js'
import type { Evaluator } from '../evaluation/evaluator.js'
import {
  type Action,
  type EvaluatedMessage,
  evaluatedMessages,
  failedIn,
  replacementText,
} from '../proxy/completions.js'
import { extraFieldsFor } from '../proxy/extra-fields.js'
import {
  maskedRequest,
  maskedResponse,
  modelList,
  RESPONSES_API,
  type ResponsesNotRead,
  readResponsesInput,
  replacedResponse,
  responseEvents,
  responseReply,
  responseShell,
} from '../proxy/responses.js'
import { ResponsesStreamRelay } from '../proxy/responses-relay.js'
import { callUpstream, streamUpstream } from '../proxy/upstream.js'
import type { CompiledPolicy } from '../rules/evaluate.js'
import { maskedCounts } from '../rules/masking.js'
import { StreamRelease, streamPlan, ToolCallWatch } from '../rules/stream.js'
import type { Application } from '../schemas/applications.js'
import type { WardenOutcome } from '../schemas/chat-completions.js'
import type { Evaluation } from '../schemas/evaluations.js'
import type { ResponsesRequest } from '../schemas/responses.js'
import { type ModelCall, modelCallSpan, recordUsage, type Span } from '../telemetry/index.js'
import type { ApplicationsService } from './applications.service.js'
import type { EvaluationCaller, EvaluationsService } from './evaluations.service.js'
import { guardedInPool } from './evaluations.service.js'
import {
  addCounts,
  type Decided,
  evaluateReply,
  inputMasking,
  providerUpstream,
  requestModel,
} from './guarded-proxy.js'
import type { WorkspaceGrants } from './workspace-grants.js'

type Json = Record<string, unknown>

/** Warden's outcome on a response: the chat route's, and what of the input no rule read. */
export type ResponsesOutcome = WardenOutcome & { not_read?: ResponsesNotRead[] }

/** A guarded response, ready to send: JSON, or server-sent events. */
export interface ResponsesAnswer {
  /** What Warden did (X-Warden-Action); null for a stream released as it grows. */
  action: Action | null
  stream: boolean
  body: string | AsyncIterable<string>
}

export interface ResponsesDependencies {
  applications: Pick<ApplicationsService, 'find'>
  evaluations: Pick<EvaluationsService, 'evaluateUnlogged' | 'log'>
  evaluator: Pick<Evaluator, 'scoreWindow'>
  config: Pick<Config, 'providers' | 'providerTimeoutMs' | 'streamWindowChars'>
  clock: Clock
  grants: Pick<WorkspaceGrants, 'allows'>
}

/**
 * The body sent upstream: the request as sent, with the application's model and parameters where
 * the request sets none (`max_tokens` as `max_output_tokens`, `system_prompt` as `instructions`).
 */
export function responsesBody(request: ResponsesRequest, application: Application, model: string): Json {
  const body: Json = { ...request, model }
  const parameters = application.parameters
  if (parameters) {
    if (request.temperature == null && parameters.temperature !== null)
      body.temperature = parameters.temperature
    if (request.top_p == null && parameters.top_p !== null) body.top_p = parameters.top_p
    if (request.max_output_tokens == null && parameters.max_tokens !== null)
      body.max_output_tokens = parameters.max_tokens
    if (request.top_k == null && parameters.top_k !== null) body.top_k = parameters.top_k
    if (request.instructions == null && parameters.system_prompt) body.instructions = parameters.system_prompt
  }
  if (body.top_k == null) delete body.top_k
  return body
}

const modelCall = (application: Application, model: string, body: Json): ModelCall => ({
  operation: 'chat',
  provider: application.provider ?? 'unknown',
  model,
  input: body.input,
})

/** Server-sent events, as OpenAI's Responses API writes them: the event's type, then its data. */
export const responseEventText = (event: Json): string =>
  `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`

/**
 * Guarded responses (docs/agents.md, CONTRACT section 14): OpenAI's Responses API through the
 * application's provider, its input items evaluated before the upstream is called and its output
 * items before the client sees them, the override in place of whatever failed. The same
 * evaluations, masking and log as chat completions (guarded-proxy.ts).
 */
export class ResponsesService {
  constructor(private readonly deps: ResponsesDependencies) {}

  /** OpenAI's model list for the application: its model, or none. */
  async models(caller: EvaluationCaller, applicationId: string): Promise<Json> {
    return modelList(await this.deps.applications.find(caller.workspaceId, applicationId))
  }

  async respond(
    caller: EvaluationCaller,
    applicationId: string,
    request: ResponsesRequest,
    options: { signal?: AbortSignal; buffered?: boolean } = {},
  ): Promise<ResponsesAnswer> {
    const { evaluations, clock } = this.deps
    const { signal } = options
    const application = await this.deps.applications.find(caller.workspaceId, applicationId)
    const upstream = await providerUpstream(this.deps, application, caller.workspaceId, 'responses')
    const model = requestModel(request.model, application)
    let body: Json = { ...responsesBody(request, application, model), ...extraFieldsFor(request, upstream) }
    const stream = request.stream === true
    const read = readResponsesInput(body)
    const notRead = read.notRead.length > 0 ? { not_read: read.notRead } : {}
    // An input of only items no rule reads (a reference to an earlier item) is evaluated as an empty turn.
    const sent = read.messages.length > 0 ? read.messages : [{ role: 'user' as const, content: '' }]
    let conversation: EvaluatedMessage[] = evaluatedMessages(sent)

    const inputDecided = await evaluations.evaluateUnlogged(
      caller,
      applicationId,
      { messages: conversation },
      { ...(signal ? { signal } : {}), source: 'responses_input', sent },
    )
    const input = inputDecided.answer
    if (input.action !== 'allow' && input.action !== 'mask') {
      await evaluations.log([inputDecided])
      const warden: ResponsesOutcome = {
        action: input.action,
        input_evaluation_id: input.id,
        output_evaluation_id: null,
        output_evaluation_ids: [],
        failed: failedIn('input', input.id, null, input),
        ...notRead,
      }
      const stopped = replacedResponse(
        responseShell(body, model, clock.nowSeconds()),
        replacementText(input.override_response),
        warden as Json,
      )
      return {
        action: input.action,
        stream,
        body: stream ? eventsText(responseEvents(stopped)) : JSON.stringify(stopped),
      }
    }

    // Masked (docs/masking.md): the upstream sees the masked items, the reply gets the values back.
    const plan = inputDecided.record.outcome.masking
    if (input.masked) {
      body = maskedRequest(body, read, input.masked.messages)
      conversation = evaluatedMessages(input.masked.messages)
    }
    const masking = inputMasking(plan)
    const policies = inputDecided.policies
    const evaluateOutput = (reply: ReturnType<typeof responseReply>) =>
      evaluateReply(
        evaluations,
        caller,
        applicationId,
        conversation,
        reply,
        policies,
        'responses_output',
        signal,
      )
    const outcomeOf = (
      output: Evaluation | null,
      action: Action,
      counts: Record<string, number>,
    ): ResponsesOutcome => {
      const masked = action === 'allow' && Object.keys(counts).length > 0
      return {
        action: masked ? 'mask' : action,
        input_evaluation_id: input.id,
        output_evaluation_id: output?.id ?? null,
        output_evaluation_ids: [output?.id ?? null],
        ...(masked ? { masked: counts } : {}),
        failed: action === 'allow' || output === null ? [] : failedIn('output', output.id, 0, output),
        ...notRead,
      }
    }

    if (stream && options.buffered !== true && !guardedInPool(policies)) {
      const streamed = streamPlan(policies.policies.map((p) => p.compiled as CompiledPolicy))
      if (streamed.mode === 'incremental') {
        // The upstream call's span (tracing on) lasts until the relay ends.
        let endCall: () => void = () => undefined
        let callSpan: Span | undefined
        const callEnded = new Promise<void>((resolve) => {
          endCall = resolve
        })
        void modelCallSpan(modelCall(application, model, body), (span) => {
          callSpan = span
          return callEnded
        })
        const halt = new AbortController()
        const events = streamUpstream({
          upstream,
          body,
          timeoutMs: this.deps.config.providerTimeoutMs,
          signal: signal ? AbortSignal.any([signal, halt.signal]) : halt.signal,
          api: RESPONSES_API,
        })
        let first: Awaited<ReturnType<typeof events.next>>
        try {
          first = await events.next()
        } catch (error) {
          endCall()
          await evaluations.log([inputDecided])
          throw error
        }
        const release = () =>
          new StreamRelease(streamed, this.deps.config.streamWindowChars, (window) =>
            this.deps.evaluator.scoreWindow(caller.workspaceId, streamed.scored, window.text, signal),
          )
        const relay = new ResponsesStreamRelay<Decided>(
          {
            inputDecided,
            release: release(),
            nextRelease: release,
            toolCalls: new ToolCallWatch(streamed.detectors),
            halt,
            evaluateOutput: (reply) =>
              (evaluateOutput(reply) ?? Promise.resolve(null)) as Promise<Decided | null>,
            log: (decided) => evaluations.log(decided),
            masking: { ...masking, index: conversation.length, planOf: (d) => d.record.outcome.masking },
            outcome: (output, action, counts) => outcomeOf(output, action, counts) as Json,
            upstreamEnded: endCall,
            upstreamFinal: (final) => recordUsage(callSpan, final.usage as Json | undefined, final.model),
          },
          events,
        )
        return { action: null, stream: true, body: relay.events(first) }
      }
    }

    let response: Json
    let decided: Decided | null
    try {
      response = await modelCallSpan(modelCall(application, model, body), async (span) => {
        const reply = await this.call(upstream, body, stream, signal)
        if (span) recordUsage(span, reply.usage as Json | undefined, reply.model)
        return reply
      })
      decided = await evaluateOutput(responseReply(response))
    } catch (error) {
      await evaluations.log([inputDecided])
      throw error
    }
    await evaluations.log(decided === null ? [inputDecided] : [inputDecided, decided])
    const output = decided?.answer ?? null
    const counts = { ...masking.counts }
    let answer: Json
    let action: Action = 'allow'
    if (output !== null && output.action !== 'allow' && output.action !== 'mask') {
      action = output.action
      answer = replacedResponse(
        response,
        replacementText(output.override_response),
        outcomeOf(output, action, {}) as Json,
      )
    } else {
      const outputPlan = decided?.record.outcome.masking ?? null
      if (outputPlan) addCounts(counts, maskedCounts(outputPlan))
      const warden = outcomeOf(output, 'allow', counts)
      action = warden.action
      answer = {
        ...maskedResponse(response, { plan: outputPlan, index: conversation.length, values: masking.values }),
        warden,
      }
    }
    return { action, stream, body: stream ? eventsText(responseEvents(answer)) : JSON.stringify(answer) }
  }

  /**
   * The upstream's whole response: a JSON one, or a buffered stream's, read from its terminal
   * event (`response.completed`, `response.incomplete`).
   */
  private async call(
    upstream: ProviderUpstream,
    body: Json,
    stream: boolean,
    signal: AbortSignal | undefined,
  ) {
    const reply = await callUpstream({
      upstream,
      body,
      stream,
      timeoutMs: this.deps.config.providerTimeoutMs,
      api: RESPONSES_API,
      ...(signal ? { signal } : {}),
    })
    if (!reply.stream) return reply.completion as Json
    for (let i = reply.chunks.length - 1; i >= 0; i--) {
      const event = reply.chunks[i]?.chunk as Json
      if (
        typeof event.response === 'object' &&
        event.response !== null &&
        String(event.type).startsWith('response.')
      )
        return event.response as Json
    }
    return { output: [] }
  }
}

function eventsText(events: readonly Json[]): string {
  return events.map(responseEventText).join('')
}
