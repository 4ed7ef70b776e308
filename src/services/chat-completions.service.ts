import { randomUUID } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { Config, ProviderUpstream } from '../config.js'
import type { Evaluator } from '../evaluation/evaluator.js'
import {
  type Action,
  type CompletionShell,
  completionReplies,
  type EvaluatedMessage,
  evaluatedMessages,
  failedIn,
  guardedCompletion,
  guardedStream,
  maskedCompletion,
  maskedStream,
  type ReplyMasking,
  type ReplyOfChoice,
  replacementText,
  type StreamChunk,
  stoppedCompletion,
  stoppedStream,
  streamReplies,
  upstreamBody,
} from '../proxy/completions.js'
import { extraFieldsFor } from '../proxy/extra-fields.js'
import { StreamRelay } from '../proxy/stream-relay.js'
import { callUpstream, streamUpstream } from '../proxy/upstream.js'
import type { CompiledPolicy } from '../rules/evaluate.js'
import { maskedCounts } from '../rules/masking.js'
import {
  guardsReply,
  type StreamDetector,
  StreamRelease,
  streamPlan,
  ToolCallWatch,
} from '../rules/stream.js'
import type { Application } from '../schemas/applications.js'
import type { ChatCompletionRequest, WardenOutcome } from '../schemas/chat-completions.js'
import type { Evaluation } from '../schemas/evaluations.js'
import type { ChatMessage } from '../schemas/messages.js'
import {
  type ModelCall,
  modelCallSpan,
  outputCapture,
  recordOutput,
  recordUsage,
  type Span,
} from '../telemetry/index.js'
import type { ApplicationsService } from './applications.service.js'
import type { EvaluationRecord } from './evaluation-log.service.js'
import {
  type EvaluationCaller,
  type EvaluationsService,
  guardedInPool,
  type StoredPolicies,
} from './evaluations.service.js'
import {
  addCounts,
  type Decided,
  evaluateReply,
  inputMasking,
  type Masking,
  providerUpstream,
  requestModel,
} from './guarded-proxy.js'
import type { WorkspaceGrants } from './workspace-grants.js'

/**
 * A guarded completion, ready to send: JSON, the text of a whole server-sent event stream, or
 * the events of a stream released as the reply grows.
 */
export interface ChatCompletionAnswer {
  /**
   * What Warden did (X-Warden-Action). Null for a stream released as it grows: its headers leave
   * before the output is decided, and its last chunk's `warden` says how it ended.
   */
  action: Action | null
  stream: boolean
  body: string | AsyncIterable<string>
}

export interface CompleteOptions {
  /** The client went away. */
  signal?: AbortSignal
  /** X-Warden-Stream: buffered: nothing of a stream is sent before the whole reply passed. */
  buffered?: boolean
}

type Json = Record<string, unknown>

export interface ChatCompletionsDependencies {
  applications: Pick<ApplicationsService, 'find'>
  evaluations: Pick<EvaluationsService, 'evaluateUnlogged' | 'log'>
  evaluator: Pick<Evaluator, 'scoreWindow'>
  config: Pick<Config, 'providers' | 'providerTimeoutMs' | 'streamWindowChars'>
  clock: Clock
  grants: Pick<WorkspaceGrants, 'allows'>
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The upstream call as OpenTelemetry's GenAI conventions name it: a chat with the application's
 * provider, and the messages sent (on the span only with content capture on).
 */
const modelCall = (application: Application, model: string, body: Json): ModelCall => ({
  operation: 'chat',
  provider: application.provider ?? 'unknown',
  model,
  input: body.messages,
})

/** The chunk of a stream that carries its usage (the last with `usage`), if any. */
function streamUsage(chunks: readonly StreamChunk[]): Json | undefined {
  for (let i = chunks.length - 1; i >= 0; i--) {
    const chunk = (chunks[i] as StreamChunk).chunk
    if (isObject(chunk.usage)) return chunk
  }
  return undefined
}

/**
 * Guarded chat completions (docs/chat-completions.md): the application's model and parameters as
 * defaults, the conversation evaluated before the upstream is called, each choice of the reply
 * evaluated before the client sees it, and the override in place of whatever failed.
 */
export class ChatCompletionsService {
  constructor(private readonly deps: ChatCompletionsDependencies) {}

  async complete(
    caller: EvaluationCaller,
    applicationId: string,
    request: ChatCompletionRequest,
    options: CompleteOptions = {},
  ): Promise<ChatCompletionAnswer> {
    const { evaluations, clock } = this.deps
    const { signal } = options
    const application = await this.deps.applications.find(caller.workspaceId, applicationId)
    const upstream = await providerUpstream(this.deps, application, caller.workspaceId)
    const model = requestModel(request.model, application)
    const body = { ...upstreamBody(request, application, model), ...extraFieldsFor(request, upstream) }
    const stream = request.stream === true
    const includeUsage = stream && request.stream_options?.include_usage === true
    let conversation = evaluatedMessages(body.messages as ChatCompletionRequest['messages'])

    // The input and output evaluations are logged together, in one commit, before the answer:
    // one durable write per completion instead of two. Whatever happens after the input was
    // evaluated (a blocked input, an upstream failure), its entry is written before the answer.
    const inputDecided = await evaluations.evaluateUnlogged(
      caller,
      applicationId,
      { messages: conversation },
      { ...(signal ? { signal } : {}), source: 'chat_input', sent: body.messages as ChatMessage[] },
    )
    const input = inputDecided.answer
    if (input.action !== 'allow' && input.action !== 'mask') {
      await evaluations.log([inputDecided])
      const shell: CompletionShell = { id: `chatcmpl-${randomUUID()}`, created: clock.nowSeconds(), model }
      const warden: WardenOutcome = {
        action: input.action,
        input_evaluation_id: input.id,
        output_evaluation_id: null,
        output_evaluation_ids: [],
        failed: failedIn('input', input.id, null, input),
      }
      const text = replacementText(input.override_response)
      const n = request.n ?? 1
      return {
        action: input.action,
        stream,
        body: stream
          ? stoppedStream(shell, n, text, includeUsage, warden)
          : stoppedCompletion(shell, n, text, warden),
      }
    }

    // Masked (docs/masking.md): the upstream sees the masked conversation, the output is read
    // after it, and the reply gets back the values the input's mask rules restore.
    const inputPlan = inputDecided.record.outcome.masking
    if (input.masked) {
      body.messages = input.masked.messages
      conversation = evaluatedMessages(input.masked.messages as ChatCompletionRequest['messages'])
    }
    const masking: Masking = inputMasking(inputPlan)

    // A policy compiled only in the evaluation pool (too costly for the event loop) cannot hold
    // back text here: a stream it guards is buffered, its output evaluated in the pool.
    if (
      stream &&
      options.buffered !== true &&
      (request.n ?? 1) === 1 &&
      !guardedInPool(inputDecided.policies)
    ) {
      const plan = streamPlan(inputDecided.policies.policies.map((p) => p.compiled as CompiledPolicy))
      if (plan.mode === 'incremental')
        return this.released(
          caller,
          applicationId,
          upstream,
          body,
          conversation,
          inputDecided,
          plan,
          signal,
          modelCall(application, model, body),
          masking,
        )
    }

    let reply: Awaited<ReturnType<typeof callUpstream>>
    let decided: ({ answer: Evaluation; record: EvaluationRecord } | null)[]
    let replies: Map<number, ReplyOfChoice>
    let indexes: number[]
    try {
      reply = await modelCallSpan(modelCall(application, model, body), async (span) => {
        const answered = await callUpstream({
          upstream,
          body,
          stream,
          timeoutMs: this.deps.config.providerTimeoutMs,
          ...(signal ? { signal } : {}),
        })
        if (span) {
          const usage = answered.stream ? streamUsage(answered.chunks) : answered.completion
          recordUsage(span, usage?.usage as Json | undefined, usage?.model)
          recordOutput(span, answered.stream ? answered.chunks.map((c) => c.chunk) : [answered.completion])
        }
        return answered
      })
      replies = reply.stream ? streamReplies(reply.chunks).replies : completionReplies(reply.completion)
      indexes = [...replies.keys()].sort((a, b) => a - b)
      decided = await Promise.all(
        indexes.map((index) =>
          this.evaluateOutput(
            caller,
            applicationId,
            conversation,
            replies.get(index) ?? { text: null, toolCalls: [] },
            inputDecided.policies,
            signal,
          ),
        ),
      )
    } catch (error) {
      await evaluations.log([inputDecided])
      throw error
    }
    await evaluations.log([inputDecided, ...decided.filter((d) => d !== null)])
    const outputs = decided.map((d) => d?.answer ?? null)
    const replacements = new Map<number, string>()
    const maskings = new Map<number, ReplyMasking>()
    const counts = { ...masking.counts }
    let action: Action = 'allow'
    const failed: WardenOutcome['failed'] = []
    for (const [i, output] of outputs.entries()) {
      const choice = indexes[i] as number
      const outputMasking = decided[i]?.record.outcome.masking ?? null
      maskings.set(choice, { plan: outputMasking, index: conversation.length, values: masking.values })
      if (outputMasking) addCounts(counts, maskedCounts(outputMasking))
      if (!output || output.action === 'allow' || output.action === 'mask') continue
      replacements.set(choice, replacementText(output.override_response))
      failed.push(...failedIn('output', output.id, choice, output))
      if (action === 'allow') action = output.action
    }
    if (action === 'allow' && Object.keys(counts).length > 0) action = 'mask'
    const ids = outputs.map((output) => output?.id ?? null)
    const warden: WardenOutcome = {
      action,
      input_evaluation_id: input.id,
      output_evaluation_id: ids[0] ?? null,
      output_evaluation_ids: ids,
      ...(action === 'mask' ? { masked: counts } : {}),
      failed,
    }
    const guarded = guardsReply(inputDecided.policies.policies.map((p) => p.policy))
    return {
      action,
      stream,
      body: reply.stream
        ? guardedStream(maskedStream(reply.chunks, maskings), replacements, includeUsage, warden, guarded)
        : guardedCompletion(maskedCompletion(reply.completion, maskings), replacements, warden, guarded),
    }
  }

  /**
   * A stream released as the reply grows (docs/chat-completions.md, "Streaming"): the upstream's
   * chunks are relayed with their text held back only where an enforced output rule may still
   * flag it: a detector's finding in progress, or a window scored rules have not passed yet. The
   * first chunk is awaited before answering, so that an upstream that fails or stays silent is
   * still an HTTP error; after it, a failure ends the stream with an error event and no [DONE].
   */
  private async released(
    caller: EvaluationCaller,
    applicationId: string,
    upstream: ProviderUpstream,
    body: Json,
    conversation: EvaluatedMessage[],
    inputDecided: Decided & { policies: StoredPolicies },
    plan: { detectors: StreamDetector[]; scored: CompiledPolicy[] },
    signal: AbortSignal | undefined,
    call: ModelCall,
    masking: Masking,
  ): Promise<ChatCompletionAnswer> {
    // The upstream call's span (tracing on) lasts until the relay ends, past this function.
    let callSpan: Span | undefined
    let endCall: () => void = () => undefined
    const callEnded = new Promise<void>((resolve) => {
      endCall = resolve
    })
    void modelCallSpan(call, (span) => {
      callSpan = span
      return callEnded
    })
    // The reply as relayed, for the span (content capture on only).
    const output = outputCapture(callSpan)
    // Aborted when the stream stops early, though a chunk is being waited for.
    const halt = new AbortController()
    const chunks = streamUpstream({
      upstream,
      body,
      timeoutMs: this.deps.config.providerTimeoutMs,
      signal: signal ? AbortSignal.any([signal, halt.signal]) : halt.signal,
    })
    let first: IteratorResult<StreamChunk>
    try {
      first = await chunks.next()
    } catch (error) {
      endCall()
      await this.deps.evaluations.log([inputDecided])
      throw error
    }
    const release = new StreamRelease(plan, this.deps.config.streamWindowChars, (window) =>
      this.deps.evaluator.scoreWindow(caller.workspaceId, plan.scored, window.text, signal),
    )
    const relay = new StreamRelay(
      {
        inputDecided,
        release,
        toolCalls: new ToolCallWatch(plan.detectors),
        guarding: guardsReply(inputDecided.policies.policies.map((p) => p.policy)),
        halt,
        evaluateOutput: (reply) =>
          this.evaluateOutput(
            caller,
            applicationId,
            conversation,
            reply,
            inputDecided.policies,
            signal,
          ) as Promise<Decided>,
        log: (decided) => this.deps.evaluations.log(decided),
        upstreamChunk: (chunk) => {
          if (callSpan && isObject(chunk.usage)) recordUsage(callSpan, chunk.usage, chunk.model)
          output?.add(chunk)
        },
        upstreamEnded: () => {
          output?.end()
          endCall()
        },
        masking: {
          ...masking,
          index: conversation.length,
          planOf: (decided) => decided.record.outcome.masking,
        },
      },
      chunks,
    )
    return { action: null, stream: true, body: relay.events(first) }
  }

  /** The evaluation of one choice's reply after the conversation (`evaluateReply`, chat_output). */
  private evaluateOutput(
    caller: EvaluationCaller,
    applicationId: string,
    conversation: EvaluatedMessage[],
    reply: ReplyOfChoice,
    policies: StoredPolicies,
    signal: AbortSignal | undefined,
  ): Promise<Decided> | null {
    return evaluateReply(
      this.deps.evaluations,
      caller,
      applicationId,
      conversation,
      reply,
      policies,
      'chat_output',
      signal,
    )
  }
}
