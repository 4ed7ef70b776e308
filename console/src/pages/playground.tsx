import { evaluationRedactedMessagesRoleValues, policyTestExpectedVerdictValues } from '@warden/client'
import { useEffect, useId, useState } from 'preact/hooks'
import {
  answer,
  type Body,
  type Evaluation,
  FormError,
  fieldErrorsOf,
  isMissingEndpoint,
  type Message,
  type Policy,
  warden,
} from '../api'
import { ErrorSummary, errorsAt, Field, Loading, NotAvailable, Notice, PageTitle } from '../components'
import { Link } from '../router'
import { EvaluationView } from './evaluation-view'
import { PolicyFields } from './policy-fields'
import { missingId, type PolicyDraft, policyBody, policyDraft } from './policy-form'

/** The roles a message may have. */
const ROLES: readonly Message['role'][] = evaluationRedactedMessagesRoleValues

const SAMPLE: Message[] = [
  { role: 'system', content: 'You are a helpful support agent.' },
  { role: 'user', content: 'My card is 4111 1111 1111 1111, can I get a refund?' },
]

/** What a run sent, kept so the result can be saved as a test case exactly as it was evaluated. */
interface Run {
  messages: Message[]
  context: string[]
  evaluation: Evaluation
}

/** Content as the API reads it: a string, or text parts joined with "\n". */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        part && typeof part === 'object' && 'text' in part ? String((part as { text: unknown }).text) : '',
      )
      .join('\n')
  }
  return ''
}

/** Reads a pasted conversation: an array of messages, or `{"messages": [...], "context": [...]}`. */
export function parseConversation(text: string): { messages: Message[]; context: string[] | null } {
  const value: unknown = JSON.parse(text)
  const object = Array.isArray(value) ? { messages: value } : (value as Record<string, unknown>)
  if (!object || typeof object !== 'object' || !Array.isArray(object.messages)) {
    throw new Error(
      'Paste a JSON array of messages, or an object with "messages" (and optionally "context").',
    )
  }
  const messages = object.messages.map((m: unknown) => {
    const message = (m ?? {}) as Record<string, unknown>
    const role = ROLES.includes(message.role as Message['role']) ? (message.role as Message['role']) : 'user'
    return { role, content: contentText(message.content) }
  })
  const context = Array.isArray(object.context) ? object.context.map((c) => String(c)) : null
  return { messages, context }
}

/**
 * Evaluate a conversation against the application's saved policies, pinned by choice, and draft
 * policies that are not stored. Nothing but the evaluation call (and, on request, a test case) is
 * sent.
 */
export function PlaygroundPage({ appId, preselect }: { appId: string; preselect: string | null }) {
  const [messages, setMessages] = useState<Message[]>(SAMPLE)
  const [context, setContext] = useState<string[]>([])
  const [pasted, setPasted] = useState('')
  const [pasteError, setPasteError] = useState<string | null>(null)
  const [saved, setSaved] = useState<Policy[] | null>(null)
  const [chosen, setChosen] = useState<string[]>([])
  const [drafts, setDrafts] = useState<PolicyDraft[]>([])
  const [redact, setRedact] = useState(false)
  const [run, setRun] = useState<Run | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [unavailable, setUnavailable] = useState(false)
  const ids = useId()

  useEffect(() => {
    answer(
      warden.GET('/v1/applications/{application_id}/policies', {
        params: { path: { application_id: appId }, query: { limit: 200 } },
      }),
    )
      .then((got) => {
        setSaved(got.data.data)
        const all = got.data.data.map((p) => p.id)
        setChosen(preselect && all.includes(preselect) ? [preselect] : all)
      })
      .catch((caught) => setError(caught))
  }, [appId, preselect])

  const fieldErrors = fieldErrorsOf(error)

  const evaluate = async (event: Event) => {
    event.preventDefault()
    const missing = drafts.flatMap((draft, i) => missingId(draft, `/draft_policies/${i}`))
    if (missing.length > 0) {
      setError(new FormError(missing))
      setRun(null)
      return
    }
    setBusy(true)
    setError(null)
    const sent = { messages: messages.map((m) => ({ ...m })), context: [...context] }
    try {
      const evaluated = await answer(
        warden.POST('/v1/applications/{application_id}/evaluations', {
          params: { path: { application_id: appId } },
          body: {
            messages: sent.messages,
            context: sent.context.length ? sent.context : null,
            policies: chosen,
            draft_policies: drafts.map((d) => policyBody(d, true)),
            redact,
            // Logged as a playground run: listed apart in the log, and not in the evaluation metrics.
            source: 'playground',
          },
        }),
      )
      setRun({ ...sent, evaluation: evaluated.data })
      setUnavailable(false)
    } catch (caught) {
      if (isMissingEndpoint(caught)) setUnavailable(true)
      else setError(caught)
      setRun(null)
    } finally {
      setBusy(false)
    }
  }

  const usePasted = () => {
    try {
      const parsed = parseConversation(pasted)
      setMessages(parsed.messages)
      if (parsed.context) setContext(parsed.context)
      setPasteError(null)
    } catch (caught) {
      setPasteError(caught instanceof Error ? caught.message : String(caught))
    }
  }

  return (
    <section>
      <PageTitle>Playground</PageTitle>
      <p class="subtitle">
        Evaluate a conversation against the policies of{' '}
        <Link to={`/applications/${encodeURIComponent(appId)}`}>{appId}</Link>. Draft policies are evaluated
        as if they existed; nothing is stored but the evaluation log entry.
      </p>
      {unavailable && <NotAvailable what="evaluations" />}
      <ErrorSummary error={error} />
      <form class="playground" noValidate onSubmit={evaluate}>
        <fieldset class="conversation-editor" data-pointer="/messages">
          <legend>Conversation</legend>
          {errorsAt(fieldErrors, '/messages').map((e) => (
            <p class="field-error" key={e.detail} data-error-for="/messages">
              {e.detail}
            </p>
          ))}
          <ol class="message-list">
            {messages.map((message, i) => (
              <li key={i} class="message-edit card">
                <Field label={`Message ${i + 1} role`} pointer={`/messages/${i}/role`} errors={fieldErrors}>
                  {(c) => (
                    <select
                      {...c}
                      value={message.role}
                      onChange={(e) =>
                        setMessages(
                          messages.map((m, j) =>
                            j === i ? { ...m, role: e.currentTarget.value as Message['role'] } : m,
                          ),
                        )
                      }
                    >
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  )}
                </Field>
                <Field
                  label={`Message ${i + 1} text`}
                  pointer={`/messages/${i}/content`}
                  errors={fieldErrors}
                >
                  {(c) => (
                    <textarea
                      {...c}
                      rows={2}
                      value={message.content}
                      onInput={(e) =>
                        setMessages(
                          messages.map((m, j) => (j === i ? { ...m, content: e.currentTarget.value } : m)),
                        )
                      }
                    />
                  )}
                </Field>
                <button
                  type="button"
                  class="danger small"
                  aria-label={`Remove message ${i + 1}`}
                  onClick={() => setMessages(messages.filter((_, j) => j !== i))}
                >
                  Remove
                </button>
              </li>
            ))}
          </ol>
          <div class="actions">
            <button
              type="button"
              onClick={() =>
                setMessages([
                  ...messages,
                  {
                    role: messages[messages.length - 1]?.role === 'user' ? 'assistant' : 'user',
                    content: '',
                  },
                ])
              }
            >
              Add a message
            </button>
            <button type="button" onClick={() => setContext([...context, ''])}>
              Add a context document
            </button>
          </div>
          {context.length > 0 && (
            <ol class="context-list">
              {context.map((doc, i) => (
                <li key={i} class="card">
                  <Field label={`Context document ${i + 1}`} pointer={`/context/${i}`} errors={fieldErrors}>
                    {(c) => (
                      <textarea
                        {...c}
                        rows={2}
                        value={doc}
                        onInput={(e) =>
                          setContext(context.map((d, j) => (j === i ? e.currentTarget.value : d)))
                        }
                      />
                    )}
                  </Field>
                  <button
                    type="button"
                    class="danger small"
                    aria-label={`Remove context document ${i + 1}`}
                    onClick={() => setContext(context.filter((_, j) => j !== i))}
                  >
                    Remove
                  </button>
                </li>
              ))}
            </ol>
          )}
          <details class="paste">
            <summary>Paste a conversation as JSON</summary>
            <div class="field">
              <label for={`${ids}-paste`}>Messages JSON</label>
              <textarea
                id={`${ids}-paste`}
                class="mono"
                rows={5}
                value={pasted}
                placeholder='[{"role": "user", "content": "Hello"}]'
                aria-describedby={pasteError ? `${ids}-paste-error` : undefined}
                onInput={(e) => setPasted(e.currentTarget.value)}
              />
              {pasteError && (
                <p class="field-error" id={`${ids}-paste-error`}>
                  {pasteError}
                </p>
              )}
            </div>
            <button type="button" onClick={usePasted}>
              Use this conversation
            </button>
          </details>
        </fieldset>

        <fieldset class="policy-pick" data-pointer="/policies">
          <legend>Saved policies to evaluate</legend>
          {!saved && !error && <Loading what="Loading policies" />}
          {saved && saved.length === 0 && <p class="empty">This application has no saved policies yet.</p>}
          <div class="options">
            {saved?.map((p) => (
              <label key={p.id} class="check">
                <input
                  type="checkbox"
                  checked={chosen.includes(p.id)}
                  onChange={(e) =>
                    setChosen(
                      e.currentTarget.checked
                        ? saved.filter((s) => s.id === p.id || chosen.includes(s.id)).map((s) => s.id)
                        : chosen.filter((id) => id !== p.id),
                    )
                  }
                />
                <code>{p.id}</code>{' '}
                <span class="muted">
                  rev. {p.revision}, {p.mode ?? 'enforce'}
                </span>
              </label>
            ))}
          </div>
          {errorsAt(fieldErrors, '/policies', true).map((e) => (
            <p class="field-error" key={e.pointer + e.detail} data-error-for={e.pointer}>
              {e.pointer}: {e.detail}
            </p>
          ))}
        </fieldset>

        <fieldset class="drafts">
          <legend>Draft policies (not stored)</legend>
          {drafts.map((draft, i) => (
            <div key={i} class="card draft">
              <div class="rule-head">
                <h3>Draft {i + 1}</h3>
                <button
                  type="button"
                  class="danger small"
                  onClick={() => setDrafts(drafts.filter((_, j) => j !== i))}
                >
                  Remove draft {i + 1}
                </button>
              </div>
              <PolicyFields
                draft={draft}
                onChange={(next) => setDrafts(drafts.map((d, j) => (j === i ? next : d)))}
                errors={fieldErrors}
                prefix={`/draft_policies/${i}`}
                withId
              />
            </div>
          ))}
          <div class="actions">
            <button
              type="button"
              onClick={() =>
                setDrafts([...drafts, { ...policyDraft(null), id: `draft-${drafts.length + 1}` }])
              }
            >
              Add a draft policy
            </button>
            {saved && saved.length > 0 && (
              <DraftFrom
                saved={saved}
                onPick={(p) => setDrafts([...drafts, { ...policyDraft(p), id: `${p.id}-draft` }])}
              />
            )}
          </div>
        </fieldset>

        <label class="check">
          <input type="checkbox" checked={redact} onChange={(e) => setRedact(e.currentTarget.checked)} />
          Also return the redacted conversation
        </label>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || messages.length === 0}>
            {busy ? 'Evaluating…' : 'Run evaluation'}
          </button>
        </div>
      </form>

      {run && (
        <section aria-labelledby="result-heading" class="result">
          <h2 id="result-heading">Result</h2>
          <EvaluationView evaluation={run.evaluation} messages={run.messages} context={run.context} />
          {run.evaluation.redacted && (
            <details class="json-preview">
              <summary>Redacted conversation</summary>
              <pre>{JSON.stringify(run.evaluation.redacted, null, 2)}</pre>
            </details>
          )}
          <SaveAsTest appId={appId} run={run} />
        </section>
      )}
    </section>
  )
}

function DraftFrom({ saved, onPick }: { saved: Policy[]; onPick: (policy: Policy) => void }) {
  const [pick, setPick] = useState(saved[0]?.id ?? '')
  const id = useId()
  return (
    <div class="inline-field">
      <label for={id}>Start a draft from</label>
      <select id={id} value={pick} onChange={(e) => setPick(e.currentTarget.value)}>
        {saved.map((p) => (
          <option key={p.id} value={p.id}>
            {p.id}
          </option>
        ))}
      </select>
      <button
        type="button"
        onClick={() => {
          const policy = saved.find((p) => p.id === pick)
          if (policy) onPick(policy)
        }}
      >
        Copy as draft
      </button>
    </div>
  )
}

/** Saves the run's conversation as a test case of one of the saved policies it evaluated. */
function SaveAsTest({ appId, run }: { appId: string; run: Run }) {
  const stored = run.evaluation.policies.filter((p) => !p.draft)
  const [policyId, setPolicyId] = useState(stored[0]?.id ?? '')
  const result = stored.find((p) => p.id === policyId)
  const [name, setName] = useState('')
  const [verdict, setVerdict] = useState<Body<'createPolicyTest'>['expected']['verdict']>(
    result?.verdict === 'pass' ? 'pass' : 'fail',
  )
  const [withRules, setWithRules] = useState(true)
  const [error, setError] = useState<unknown>(null)
  const [done, setDone] = useState<string | null>(null)
  const [unavailable, setUnavailable] = useState(false)
  const ids = useId()

  useEffect(() => {
    if (result) setVerdict(result.verdict === 'pass' ? 'pass' : 'fail')
  }, [policyId, run])

  if (stored.length === 0) return null
  const fieldErrors = fieldErrorsOf(error)

  const save = async (event: Event) => {
    event.preventDefault()
    setError(null)
    setDone(null)
    const body: Body<'createPolicyTest'> = {
      name: name.trim() || `Playground run ${new Date().toISOString()}`,
      messages: run.messages,
      context: run.context.length ? run.context : null,
      expected: {
        verdict,
        rules: withRules && result ? result.rules.map((r) => ({ index: r.index, status: r.status })) : null,
      },
    }
    try {
      await answer(
        warden.POST('/v1/applications/{application_id}/policies/{policy_id}/tests', {
          params: { path: { application_id: appId, policy_id: policyId } },
          body,
        }),
      )
      setDone(policyId)
    } catch (caught) {
      if (isMissingEndpoint(caught)) setUnavailable(true)
      else setError(caught)
    }
  }

  return (
    <section aria-labelledby={`${ids}-title`} class="card save-test">
      <h3 id={`${ids}-title`}>Save this conversation as a test case</h3>
      {unavailable && <NotAvailable what="policy tests" />}
      <ErrorSummary error={error} />
      {done && (
        <Notice kind="success">
          Test case saved.{' '}
          <Link to={`/applications/${encodeURIComponent(appId)}/policies/${encodeURIComponent(done)}/tests`}>
            Open the tests of {done}
          </Link>
        </Notice>
      )}
      <form noValidate onSubmit={save} class="grid three">
        <div class="field">
          <label for={`${ids}-policy`}>Policy</label>
          <select id={`${ids}-policy`} value={policyId} onChange={(e) => setPolicyId(e.currentTarget.value)}>
            {stored.map((p) => (
              <option key={p.id} value={p.id}>
                {p.id}
              </option>
            ))}
          </select>
        </div>
        <Field label="Test name" pointer="/name" errors={fieldErrors}>
          {(c) => <input {...c} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field label="Expected verdict" pointer="/expected/verdict" errors={fieldErrors}>
          {(c) => (
            <select
              {...c}
              value={verdict}
              onChange={(e) => setVerdict(e.currentTarget.value as typeof verdict)}
            >
              {policyTestExpectedVerdictValues.map((value) => (
                <option key={value} value={value}>
                  {value}
                </option>
              ))}
            </select>
          )}
        </Field>
        <label class="check">
          <input
            type="checkbox"
            checked={withRules}
            onChange={(e) => setWithRules(e.currentTarget.checked)}
          />
          Also expect each rule's status as in this run
        </label>
        <div class="actions">
          <button type="submit" class="primary">
            Save as test case
          </button>
        </div>
      </form>
    </section>
  )
}
