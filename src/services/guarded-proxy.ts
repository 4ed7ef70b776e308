import type { Config, ProviderUpstream } from '../config.js'
import { providerEnvName } from '../config.js'
import { invalid } from '../errors.js'
import type { EvaluatedMessage, ReplyOfChoice } from '../proxy/completions.js'
import { type MaskPlan, maskedCounts, restorable } from '../rules/masking.js'
import type { Application } from '../schemas/applications.js'
import type { Evaluation, EvaluationSource } from '../schemas/evaluations.js'
import type { EvaluationRecord } from './evaluation-log.service.js'
import type { EvaluationCaller, EvaluationsService, StoredPolicies } from './evaluations.service.js'
import type { WorkspaceGrants } from './workspace-grants.js'

/**
 * What the guarded proxies share (chat completions, docs/chat-completions.md; responses,
 * docs/agents.md): the application's upstream and model, the evaluation of a reply after the
 * conversation, and what masking the input left for the reply.
 */

/** An evaluation decided and not yet logged. */
export type Decided = { answer: Evaluation; record: EvaluationRecord }

const PATH_POINTER = '#/path/application_id'

/**
 * The upstream of the application's provider; 422 naming what is missing. A provider the
 * operator has not granted to the workspace (PROVIDER_<NAME>_WORKSPACES) answers as one without
 * an upstream: a tenant learns nothing of what is configured for others.
 */
export async function providerUpstream(
  deps: { config: Pick<Config, 'providers'>; grants: Pick<WorkspaceGrants, 'allows'> },
  application: Application,
  workspaceId: string,
  what = 'chat completions',
): Promise<ProviderUpstream> {
  const { provider, id } = application
  if (provider === null)
    throw invalid(
      [
        {
          pointer: PATH_POINTER,
          detail: `application "${id}" has no provider: set its provider (e.g. "openai") and configure that provider's upstream`,
        },
      ],
      `Application "${id}" has no provider to send ${what} to`,
    )
  const upstream = deps.config.providers.find(provider)
  if (!upstream || !(await deps.grants.allows(upstream.workspaces, workspaceId))) {
    const name = providerEnvName(provider)
    throw invalid(
      [
        {
          pointer: PATH_POINTER,
          detail: `provider "${provider}" of application "${id}" has no configured upstream: set PROVIDER_${name}_BASE_URL (and PROVIDER_${name}_API_KEY; PROVIDER_${name}_WORKSPACES names the workspaces that may use it)`,
        },
      ],
      `Provider "${provider}" has no configured upstream`,
    )
  }
  return upstream
}

/** The request's model, or the application's; 422 when neither is set. */
export function requestModel(requested: string | null | undefined, application: Application): string {
  const model = requested || application.model
  if (!model)
    throw invalid([
      {
        pointer: '/model',
        detail: `is required: application "${application.id}" has no model to default to`,
      },
    ])
  return model
}

/**
 * The evaluation of a reply after the conversation, by the revisions the input was evaluated
 * with (a policy changed meanwhile judges the next call): its text and its tool calls' arguments
 * (docs/agents.md); none for a reply with neither.
 */
export function evaluateReply(
  evaluations: Pick<EvaluationsService, 'evaluateUnlogged'>,
  caller: EvaluationCaller,
  applicationId: string,
  conversation: readonly EvaluatedMessage[],
  reply: ReplyOfChoice,
  policies: StoredPolicies,
  source: EvaluationSource,
  signal: AbortSignal | undefined,
): Promise<Decided> | null {
  if (reply.text === null && reply.toolCalls.length === 0) return null
  const message: EvaluatedMessage = { role: 'assistant', content: reply.text ?? '' }
  if (reply.toolCalls.length > 0) message.tool_calls = reply.toolCalls
  return evaluations.evaluateUnlogged(
    caller,
    applicationId,
    { messages: [...conversation, message] },
    { ...(signal ? { signal } : {}), source, policies },
  )
}

/** What masking the input left for the rest of a call: the values to put back, what was masked. */
export interface Masking {
  values: ReadonlyMap<string, string>
  counts: Record<string, number>
}

/** The input evaluation's masking, as the reply needs it. */
export function inputMasking(plan: MaskPlan | null): Masking {
  return { values: restorable(plan), counts: plan ? maskedCounts(plan) : {} }
}

/** Adds `more` to `counts`, kind by kind. */
export function addCounts(counts: Record<string, number>, more: Record<string, number>): void {
  for (const [kind, n] of Object.entries(more)) counts[kind] = (counts[kind] ?? 0) + n
}
