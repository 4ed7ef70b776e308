import { randomUUID } from 'node:crypto'
import { type Config, type ProviderUpstream, providerEnvName } from '../config.js'
import { invalid } from '../errors.js'
import {
  type Action,
  type CompletionShell,
  completionTexts,
  type EvaluatedMessage,
  evaluatedMessages,
  guardedCompletion,
  guardedStream,
  replacementText,
  stoppedCompletion,
  stoppedStream,
  streamTexts,
  upstreamBody,
} from '../proxy/completions.js'
import { callUpstream } from '../proxy/upstream.js'
import type { Application } from '../schemas/applications.js'
import type { ChatCompletionRequest, WardenOutcome } from '../schemas/chat-completions.js'
import type { Evaluation } from '../schemas/evaluations.js'
import type { ApplicationsService } from './applications.service.js'
import type { Clock } from './clock.js'
import type { EvaluationRecord } from './evaluation-log.service.js'
import type { EvaluationCaller, EvaluationsService, StoredPolicies } from './evaluations.service.js'

/** A guarded completion, ready to send: JSON, or the text of a whole server-sent event stream. */
export interface ChatCompletionAnswer {
  /** What Warden did (X-Warden-Action). */
  action: Action
  stream: boolean
  body: string
}

export interface ChatCompletionsDependencies {
  applications: Pick<ApplicationsService, 'find'>
  evaluations: Pick<EvaluationsService, 'evaluateUnlogged' | 'log'>
  config: Pick<Config, 'providers' | 'providerTimeoutMs'>
  clock: Clock
}

const PATH_POINTER = '#/path/application_id'

/**
 * Guarded chat completions (CONTRACT section 11): the application's model and parameters as
 * defaults, the conversation evaluated before the upstream is called, each choice of the reply
 * evaluated before the client sees it, and the override in place of whatever failed.
 */
export class ChatCompletionsService {
  constructor(private readonly deps: ChatCompletionsDependencies) {}

  async complete(
    caller: EvaluationCaller,
    applicationId: string,
    request: ChatCompletionRequest,
    options: { signal?: AbortSignal } = {},
  ): Promise<ChatCompletionAnswer> {
    const { evaluations, clock } = this.deps
    const { signal } = options
    const application = await this.deps.applications.find(caller.workspaceId, applicationId)
    const upstream = this.upstreamOf(application)
    const model = request.model || application.model
    if (!model)
      throw invalid([
        {
          pointer: '/model',
          detail: `is required: application "${application.id}" has no model to default to`,
        },
      ])
    const body = upstreamBody(request, application, model)
    const stream = request.stream === true
    const includeUsage = stream && request.stream_options?.include_usage === true
    const conversation = evaluatedMessages(body.messages as ChatCompletionRequest['messages'])

    // The input and output evaluations are logged together, in one commit, before the answer:
    // one durable write per completion instead of two. Whatever happens after the input was
    // evaluated (a blocked input, an upstream failure), its entry is written before the answer.
    const inputDecided = await evaluations.evaluateUnlogged(
      caller,
      applicationId,
      { messages: conversation },
      { ...(signal ? { signal } : {}), source: 'chat_input' },
    )
    const input = inputDecided.answer
    if (input.action !== 'allow') {
      await evaluations.log([inputDecided])
      const shell: CompletionShell = { id: `chatcmpl-${randomUUID()}`, created: clock.nowSeconds(), model }
      const warden: WardenOutcome = {
        action: input.action,
        input_evaluation_id: input.id,
        output_evaluation_id: null,
        output_evaluation_ids: [],
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

    let reply: Awaited<ReturnType<typeof callUpstream>>
    let decided: ({ answer: Evaluation; record: EvaluationRecord } | null)[]
    let texts: Map<number, string | null>
    let indexes: number[]
    try {
      reply = await callUpstream({
        upstream,
        body,
        stream,
        timeoutMs: this.deps.config.providerTimeoutMs,
        ...(signal ? { signal } : {}),
      })
      texts = reply.stream ? streamTexts(reply.chunks).texts : completionTexts(reply.completion)
      indexes = [...texts.keys()].sort((a, b) => a - b)
      decided = await Promise.all(
        indexes.map((index) =>
          this.evaluateOutput(
            caller,
            applicationId,
            conversation,
            texts.get(index) ?? null,
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
    let action: Action = 'allow'
    for (const [i, output] of outputs.entries()) {
      if (!output || output.action === 'allow') continue
      replacements.set(indexes[i] as number, replacementText(output.override_response))
      if (action === 'allow') action = output.action
    }
    const ids = outputs.map((output) => output?.id ?? null)
    const warden: WardenOutcome = {
      action,
      input_evaluation_id: input.id,
      output_evaluation_id: ids[0] ?? null,
      output_evaluation_ids: ids,
    }
    return {
      action,
      stream,
      body: reply.stream
        ? guardedStream(reply.chunks, replacements, includeUsage, warden)
        : guardedCompletion(reply.completion, replacements, warden),
    }
  }

  /**
   * The evaluation of one choice's reply after the conversation, by the revisions the input was
   * evaluated with (a policy changed meanwhile judges the next completion); none for a choice
   * without text (tool calls only).
   */
  private evaluateOutput(
    caller: EvaluationCaller,
    applicationId: string,
    conversation: EvaluatedMessage[],
    text: string | null,
    policies: StoredPolicies,
    signal: AbortSignal | undefined,
  ): Promise<{ answer: Evaluation; record: EvaluationRecord }> | null {
    if (text === null) return null
    return this.deps.evaluations.evaluateUnlogged(
      caller,
      applicationId,
      { messages: [...conversation, { role: 'assistant', content: text }] },
      { ...(signal ? { signal } : {}), source: 'chat_output', policies },
    )
  }

  /** The upstream of the application's provider; 422 naming what is missing. */
  private upstreamOf(application: Application): ProviderUpstream {
    const { provider, id } = application
    if (provider === null)
      throw invalid(
        [
          {
            pointer: PATH_POINTER,
            detail: `application "${id}" has no provider: set its provider (e.g. "openai") and configure that provider's upstream`,
          },
        ],
        `Application "${id}" has no provider to send chat completions to`,
      )
    const upstream = this.deps.config.providers.find(provider)
    if (!upstream) {
      const name = providerEnvName(provider)
      throw invalid(
        [
          {
            pointer: PATH_POINTER,
            detail: `provider "${provider}" of application "${id}" has no configured upstream: set PROVIDER_${name}_BASE_URL (and PROVIDER_${name}_API_KEY)`,
          },
        ],
        `Provider "${provider}" has no configured upstream`,
      )
    }
    return upstream
  }
}
