/**
 * What evaluation asks of an external scorer: the judge (src/judge/) and every guard detector
 * (src/guards/client.ts) are one `Scorer` each, built over the same cached, coalesced, abortable
 * calls (calls.ts).
 */

/**
 * Who asks a question, and until when it is wanted. A scorer serves every workspace: it keeps
 * their answers apart (an answer cached for one workspace never answers another's question, or a
 * tenant could confirm what another's texts say by how fast it is answered) and gives them turns.
 */
export interface ScorerAsk {
  /** The workspace whose evaluation asks. */
  workspace: string
  /** Abandons the question: the caller went away, or the process is stopping. */
  signal?: AbortSignal
}

/** Answers a question for a workspace, or rejects with a ScorerError whose message the rule shows. */
export interface Scorer<Question, Answer> {
  score(question: Question, ask: ScorerAsk): Promise<Answer>
}

/**
 * Why a scorer could not answer. The message is shown to API clients as the rule's reason, so it
 * must be short and must never carry a secret (an API key, a URL with credentials) or the
 * scorer's raw error text. `kind` says what failed, for metrics.
 */
export class ScorerError extends Error {
  override name = 'ScorerError'
  constructor(
    message: string,
    readonly kind: string = 'failed',
  ) {
    super(message)
  }
}
