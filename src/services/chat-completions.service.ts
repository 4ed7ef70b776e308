import { randomUUID } from 'node:crypto'
import { type Config, type ProviderUpstream, providerEnvName } from '../config.js'
import { AppError, invalid } from '../errors.js'
import {
  type Action,
  type CompletionShell,
  completionTexts,
  type EvaluatedMessage,
  evaluatedMessages,
  guardedCompletion,
  guardedStream,
  replacementText,
  type StreamChunk,
  stoppedCompletion,
  stoppedStream,
  streamTexts,
  upstreamBody,
} from '../proxy/completions.js'
import { callUpstream, streamUpstream } from '../proxy/upstream.js'
import { ReleaseEngine, type StreamDetector, streamPlan } from '../rules/stream.js'
import type { Application } from '../schemas/applications.js'
import type { ChatCompletionRequest, WardenOutcome } from '../schemas/chat-completions.js'
import type { Evaluation } from '../schemas/evaluations.js'
import type { ApplicationsService } from './applications.service.js'
import type { Clock } from './clock.js'
import type { EvaluationRecord } from './evaluation-log.service.js'
import type { EvaluationCaller, EvaluationsService, StoredPolicies } from './evaluations.service.js'

/**
 * A guarded completion, ready to send: JSON, the text of a whole server-sent event stream, or
 * the events of a stream released as the reply grows.
 */
export interface ChatCompletionAnswer {
  /**
   * What Warden did (X-Warden-Action). For a stream released as it grows, what was known when
   * it started (the input was allowed); its last chunk's `warden` says how it ended.
   */
  action: Action
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
type Decided = { answer: Evaluation; record: EvaluationRecord }

export interface ChatCompletionsDependencies {
  applications: Pick<ApplicationsService, 'find'>
  evaluations: Pick<EvaluationsService, 'evaluateUnlogged' | 'log'>
  config: Pick<Config, 'providers' | 'providerTimeoutMs'>
  clock: Clock
}

const PATH_POINTER = '#/path/application_id'

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

    if (stream && options.buffered !== true && (request.n ?? 1) === 1) {
      const plan = streamPlan(inputDecided.policies.policies)
      if (plan.mode === 'incremental')
        return this.released(
          caller,
          applicationId,
          upstream,
          body,
          conversation,
          inputDecided,
          plan.detectors,
          signal,
        )
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
   * A stream released as the reply grows (section 11): the upstream's chunks are relayed with
   * their text held back only where an enforced output rule may still flag it. The first chunk
   * is awaited before answering, so that an upstream that fails or stays silent is still an HTTP
   * error; after it, a failure ends the stream with an error event and no [DONE].
   */
  private async released(
    caller: EvaluationCaller,
    applicationId: string,
    upstream: ProviderUpstream,
    body: Json,
    conversation: EvaluatedMessage[],
    inputDecided: Decided & { policies: StoredPolicies },
    detectors: StreamDetector[],
    signal: AbortSignal | undefined,
  ): Promise<ChatCompletionAnswer> {
    const chunks = streamUpstream({
      upstream,
      body,
      timeoutMs: this.deps.config.providerTimeoutMs,
      ...(signal ? { signal } : {}),
    })
    let first: IteratorResult<StreamChunk>
    try {
      first = await chunks.next()
    } catch (error) {
      await this.deps.evaluations.log([inputDecided])
      throw error
    }
    const events = this.relay(first, chunks, {
      caller,
      applicationId,
      conversation,
      inputDecided,
      engine: new ReleaseEngine(detectors),
      signal,
    })
    return { action: 'allow', stream: true, body: events }
  }

  private async *relay(
    first: IteratorResult<StreamChunk>,
    chunks: AsyncGenerator<StreamChunk>,
    run: {
      caller: EvaluationCaller
      applicationId: string
      conversation: EvaluatedMessage[]
      inputDecided: Decided & { policies: StoredPolicies }
      engine: ReleaseEngine
      signal: AbortSignal | undefined
    },
  ): AsyncGenerator<string> {
    const { engine, inputDecided } = run
    const input = inputDecided.answer
    // The chunk after the choice finished (its finish, then usage): held until the next one, so
    // that the last before [DONE] carries Warden's outcome.
    let held: Json | null = null
    let envelope: Json = {}
    let finished = false
    let logged = false
    /** Evaluates and logs the whole text received: the output evaluation of the stream. */
    const decide = async (): Promise<Decided> => {
      const output = await this.evaluateOutput(
        run.caller,
        run.applicationId,
        run.conversation,
        engine.received,
        inputDecided.policies,
        run.signal,
      )
      await this.deps.evaluations.log([inputDecided, output as Decided])
      logged = true
      return output as Decided
    }
    const outcome = (action: Action, output: Evaluation): WardenOutcome => ({
      action,
      input_evaluation_id: input.id,
      output_evaluation_id: output.id,
      output_evaluation_ids: [output.id],
    })
    /** The end of a stream that failed: the override in place of the rest. */
    const stop = async function* (this: void): AsyncGenerator<string> {
      await chunks.return(undefined)
      const output = (await decide()).answer
      // The rules stopped the stream; the whole-text evaluation agrees (the property test's claim).
      const action: Action = output.action === 'allow' ? 'block' : output.action
      const text = replacementText(output.override_response)
      if (held) yield event(held)
      yield event({
        ...envelope,
        choices: [
          {
            index: 0,
            delta: text === '' ? {} : { role: 'assistant', content: text },
            logprobs: null,
            finish_reason: 'content_filter',
          },
        ],
        warden: outcome(action, output),
      })
      yield DONE
    }
    try {
      for (let step = first; !step.done; step = await chunks.next()) {
        const { raw, chunk } = step.value
        const { choices: _, usage: __, warden: ___, ...rest } = chunk
        if (!('object' in envelope)) envelope = { ...rest, object: 'chat.completion.chunk' }
        const choices = chunk.choices as Json[]
        const choice = choices.find((c) => c.index === 0)
        if (choice === undefined) {
          // Usage, or a prompt filter's results: in order, held once the choice finished.
          if (finished) {
            if (held) yield event(held)
            held = chunk
          } else yield `data: ${raw}\n\n`
          continue
        }
        const delta = (typeof choice.delta === 'object' && choice.delta !== null ? choice.delta : {}) as Json
        const field =
          typeof delta.content === 'string' ? 'content' : typeof delta.refusal === 'string' ? 'refusal' : null
        let release = ''
        if (field !== null) {
          const pushed = engine.push(delta[field] as string)
          if (pushed.violation) return yield* stop()
          release = pushed.release
        }
        if (typeof choice.finish_reason === 'string' && !finished) {
          finished = true
          const ended = engine.end()
          if (ended.violation) return yield* stop()
          const output = (await decide()).answer
          if (output.action !== 'allow') {
            const text = replacementText(output.override_response)
            yield event({
              ...envelope,
              choices: [
                {
                  index: 0,
                  delta: text === '' ? {} : { role: 'assistant', content: text },
                  logprobs: null,
                  finish_reason: 'content_filter',
                },
              ],
              warden: outcome(output.action, output),
            })
            yield DONE
            await chunks.return(undefined)
            return
          }
          envelope = { ...envelope, warden: outcome('allow', output) }
          release += ended.release
          held = { ...chunk, choices: [{ ...choice, delta: withText(delta, field, release) }] }
          continue
        }
        if (field === null) {
          if (held) yield event(held)
          held = null
          yield `data: ${raw}\n\n`
        } else if (release !== '' || Object.keys(delta).some((k) => k !== 'content' && k !== 'refusal'))
          yield event({ ...chunk, choices: [{ ...choice, delta: withText(delta, field, release) }] })
      }
      if (!finished) {
        // [DONE] without a finish reason: the reply is complete as it stands.
        const ended = engine.end()
        if (ended.violation) return yield* stop()
        const output = (await decide()).answer
        if (output.action !== 'allow') return yield* stop()
        if (ended.release !== '')
          yield event({
            ...envelope,
            choices: [{ index: 0, delta: { content: ended.release }, logprobs: null, finish_reason: null }],
          })
        envelope = { ...envelope, warden: outcome('allow', output) }
      }
      const warden = envelope.warden
      const { warden: _w, ...shell } = envelope
      yield event(held ? { ...held, warden } : { ...shell, choices: [], warden })
      yield DONE
    } catch (error) {
      if (!logged) await this.deps.evaluations.log([inputDecided]).catch(() => undefined)
      if (error instanceof AppError) {
        yield event({ error: { message: error.detail, type: error.code, param: null, code: error.code } })
        return
      }
      // The client went away (nobody reads on), or Warden failed: the stream ends without [DONE].
      return
    } finally {
      await chunks.return(undefined)
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

const event = (data: Json) => `data: ${JSON.stringify(data)}\n\n`
const DONE = 'data: [DONE]\n\n'

/** A delta with its text replaced by what is released (and no text field when nothing is). */
function withText(delta: Json, field: 'content' | 'refusal' | null, release: string): Json {
  if (field === null) return release === '' ? delta : { ...delta, content: release }
  const { [field]: _, ...rest } = delta
  return release === '' ? rest : { ...rest, [field]: release }
}
