import { piiKindValues } from '@warden/client'
import { Fragment } from 'preact'
import type { Evaluation, Finding, Message, PolicyResult, RuleResult } from '../api'
import { Badge, TableRegion } from '../components'
import { highlightSegments, type Span } from '../text'

interface Located {
  finding: Finding
  policy: PolicyResult
  rule: RuleResult
  /** 1-based number shown in the text and in the list of findings. */
  number: number
  /** The finding's rule masks what it finds (status `masked`): the placeholder it became, when the answer says. */
  masked: false | { placeholder: string | null }
}

type Placeholder = NonNullable<Evaluation['masked']>['placeholders'][number]

function locate(evaluation: Evaluation): Located[] {
  const placeholders = evaluation.masked?.placeholders ?? []
  const out: Located[] = []
  for (const policy of evaluation.policies) {
    for (const rule of policy.rules) {
      for (const finding of rule.findings ?? []) {
        const masked =
          rule.status === 'masked'
            ? { placeholder: placeholderOf(placeholders, finding, rule.type) }
            : (false as const)
        out.push({ finding, policy, rule, number: out.length + 1, masked })
      }
    }
  }
  return out
}

/** The placeholder issued for a finding's text: the same text is always the same placeholder. */
function placeholderOf(placeholders: readonly Placeholder[], finding: Finding, type: string): string | null {
  if (finding.text === null) return null
  const kind = finding.kind ?? (type === 'keywords' ? 'keyword' : type)
  const same = placeholders.filter((p) => p.text === finding.text)
  return (same.find((p) => p.kind === kind) ?? same[0])?.placeholder ?? null
}

function label(l: Located): string {
  const kind = l.finding.kind ?? l.rule.type
  // A label or placeholder marked in a logged or masked text: no rule of its own to name.
  if (l.rule.index < 0) return l.masked ? `${kind}, masked as ${l.masked.placeholder}` : `${kind}, redacted`
  const where = `${l.finding.kind ?? l.rule.type} (policy ${l.policy.id}, rule ${l.rule.index})`
  if (!l.masked) return where
  return l.masked.placeholder ? `${where}, masked as ${l.masked.placeholder}` : `${where}, masked`
}

/**
 * The labels a logged text carries where findings were: a pii kind, KEYWORD or REGEX, in
 * capitals, and a masked value's placeholder, the same with its number ([EMAIL_1]).
 */
const REDACTION_LABEL = new RegExp(
  `\\[(?:${[...piiKindValues, 'keyword', 'regex'].map((kind) => kind.toUpperCase()).join('|')})(?:_\\d{1,9})?\\]`,
  'gu',
)

/**
 * The redaction labels and placeholders in a logged text as spans, in code points. Findings'
 * offsets count in the original text, so on a redacted or masked one the labels are what is marked.
 */
function labelSpans(text: string): Span<Located>[] {
  const spans: Span<Located>[] = []
  for (const match of text.matchAll(REDACTION_LABEL)) {
    const start = [...text.slice(0, match.index)].length
    const numbered = /_\d+\]$/.test(match[0])
    const kind = match[0].slice(1, -1).replace(/_\d+$/, '').toLowerCase()
    spans.push({
      start,
      end: start + match[0].length,
      tag: {
        finding: { kind, source: 'messages', index: 0, start, end: start + match[0].length, text: match[0] },
        policy: { id: 'redacted' } as PolicyResult,
        rule: { index: -1, type: 'pii' } as RuleResult,
        number: 0,
        masked: numbered ? { placeholder: match[0] } : false,
      },
    })
  }
  return spans
}

/** Where each of these findings' texts occurs in `text`, in code points: a masked text keeps them, at other offsets. */
function occurrenceSpans(text: string, located: readonly Located[]): Span<Located>[] {
  const spans: Span<Located>[] = []
  for (const l of located) {
    const needle = l.finding.text
    if (!needle) continue
    for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) {
      const start = [...text.slice(0, at)].length
      spans.push({ start, end: start + [...needle].length, tag: l })
    }
  }
  return spans
}

/** A text with each finding on it marked; offsets are code points, converted for JavaScript. */
function Highlighted({ text, spans }: { text: string; spans: Span<Located>[] }) {
  const segments = highlightSegments(text, spans)
  return (
    <p class="conversation-text">
      {segments.map((segment, i) =>
        segment.tags.length === 0 ? (
          segment.text
        ) : (
          <Fragment key={i}>
            <mark
              class={`finding${segment.tags.length > 1 ? ' overlap' : ''}${segment.tags.every((t) => t.masked) ? ' masked' : ''}`}
              data-kind={segment.tags.map((t) => t.finding.kind ?? t.rule.type).join(' ')}
              title={segment.tags.map(label).join('; ')}
            >
              {segment.text}
            </mark>
            {segment.tags.some((t) => t.number > 0) && (
              <sup class="finding-ref">
                <span class="visually-hidden">finding </span>
                {segment.tags.map((t) => t.number).join(',')}
              </sup>
            )}
          </Fragment>
        ),
      )}
    </p>
  )
}

/** The text of a message as an answer gives it back: its string content, or its text and refusal parts. */
function answerText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .map((part) => {
      const p = (part ?? {}) as { text?: unknown; refusal?: unknown }
      return typeof p.text === 'string' ? p.text : typeof p.refusal === 'string' ? p.refusal : ''
    })
    .join('\n')
}

/** The placeholders in a masked text, as spans in code points. */
function placeholderSpans(text: string, placeholders: readonly Placeholder[]): Span<Located>[] {
  const spans: Span<Located>[] = []
  for (const p of placeholders) {
    for (let at = text.indexOf(p.placeholder); at >= 0; at = text.indexOf(p.placeholder, at + 1)) {
      const start = [...text.slice(0, at)].length
      spans.push({
        start,
        end: start + p.placeholder.length,
        tag: {
          finding: { kind: p.kind, source: 'messages', index: 0, start, end: 0, text: p.text },
          policy: { id: 'masked' } as PolicyResult,
          rule: { index: -1, type: 'pii' } as RuleResult,
          number: 0,
          masked: { placeholder: p.placeholder },
        },
      })
    }
  }
  return spans
}

/**
 * What an evaluation whose action is `mask` answers beside the verdict: the conversation as it is
 * to be sent on, each masked value replaced by its placeholder, and what each placeholder stands
 * for (docs/masking.md).
 */
function MaskedConversation({ masked }: { masked: NonNullable<Evaluation['masked']> }) {
  const { placeholders } = masked
  return (
    <section aria-labelledby="masked-heading" class="masked">
      <h3 id="masked-heading">Masked conversation, as the model is to see it</h3>
      <ol class="conversation">
        {masked.messages.map((m, i) => {
          const text = answerText(m.content)
          return (
            <li key={`m${i}`} class={`message role-${m.role}`}>
              <span class="role">
                {m.role} <span class="index">masked.messages[{i}]</span>
              </span>
              <Highlighted text={text} spans={placeholderSpans(text, placeholders)} />
            </li>
          )
        })}
        {masked.context.map((doc, i) => (
          <li key={`c${i}`} class="message role-context">
            <span class="role">
              context <span class="index">masked.context[{i}]</span>
            </span>
            <Highlighted text={doc} spans={placeholderSpans(doc, placeholders)} />
          </li>
        ))}
      </ol>
      <TableRegion label="Placeholders">
        <table class="placeholders">
          <thead>
            <tr>
              <th scope="col">Placeholder</th>
              <th scope="col">Kind</th>
              <th scope="col">Value it stands for</th>
            </tr>
          </thead>
          <tbody>
            {placeholders.map((p) => (
              <tr key={p.placeholder}>
                <td>
                  <code>{p.placeholder}</code>
                </td>
                <td>{p.kind}</td>
                <td>
                  <code>{p.text}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableRegion>
    </section>
  )
}

/**
 * An evaluation's outcome: verdict and action, the conversation with every finding highlighted,
 * and each policy's rules with status, score and method; with action `mask`, the masked
 * conversation and its placeholders.
 */
export function EvaluationView({
  evaluation,
  messages,
  context,
  logged = null,
}: {
  evaluation: Evaluation
  messages: Message[] | null
  context: string[] | null
  /**
   * The texts are as the log kept them, so findings' offsets do not apply: `redacted`, each
   * finding replaced by its label; `masked`, each masked value by its placeholder (other findings
   * are marked where their text occurs). The labels and placeholders are marked.
   */
  logged?: 'redacted' | 'masked' | null
}) {
  const located = locate(evaluation)
  const spansFor = (source: 'messages' | 'context', index: number, text: string): Span<Located>[] => {
    const here = located.filter((l) => l.finding.source === source && l.finding.index === index)
    if (logged === 'redacted') return labelSpans(text)
    if (logged === 'masked')
      return [
        ...labelSpans(text),
        ...occurrenceSpans(
          text,
          here.filter((l) => !l.masked),
        ),
      ]
    return here.map((l) => ({ start: l.finding.start, end: l.finding.end, tag: l }))
  }

  return (
    <div class="evaluation">
      <dl class="outcome">
        <div>
          <dt>Verdict</dt>
          <dd>
            <Badge value={evaluation.verdict} />
          </dd>
        </div>
        <div>
          <dt>Action</dt>
          <dd>
            <Badge value={evaluation.action} />
          </dd>
        </div>
        <div>
          <dt>Latency</dt>
          <dd>{typeof evaluation.latency_ms === 'number' ? `${evaluation.latency_ms} ms` : '—'}</dd>
        </div>
        <div>
          <dt>Evaluation id</dt>
          <dd>
            <code>{evaluation.id}</code>
          </dd>
        </div>
      </dl>
      {evaluation.override_response !== null && evaluation.override_response !== undefined && (
        <div class="override">
          <h3>Override response</h3>
          <p>{evaluation.override_response}</p>
        </div>
      )}

      {((messages?.length ?? 0) > 0 || (context?.length ?? 0) > 0) && (
        <section aria-labelledby="highlighted-heading">
          <h3 id="highlighted-heading">
            {logged === 'redacted'
              ? 'Conversation, as logged (redacted)'
              : logged === 'masked'
                ? 'Conversation, as logged (masked values as their placeholders)'
                : 'Conversation, with findings highlighted'}
          </h3>
          <ol class="conversation">
            {(messages ?? []).map((m, i) => (
              <li key={`m${i}`} class={`message role-${m.role}`}>
                <span class="role">
                  {m.role} <span class="index">messages[{i}]</span>
                </span>
                <Highlighted text={m.content} spans={spansFor('messages', i, m.content)} />
              </li>
            ))}
            {(context ?? []).map((doc, i) => (
              <li key={`c${i}`} class="message role-context">
                <span class="role">
                  context <span class="index">context[{i}]</span>
                </span>
                <Highlighted text={doc} spans={spansFor('context', i, doc)} />
              </li>
            ))}
          </ol>
        </section>
      )}

      {located.length > 0 && (
        <section aria-labelledby="findings-heading">
          <h3 id="findings-heading">Findings</h3>
          <ol class="findings">
            {located.map((l) => (
              <li key={l.number}>
                <strong>{l.finding.kind ?? l.rule.type}</strong> in {l.finding.source}[{l.finding.index}],
                code points {l.finding.start}–{l.finding.end}
                {l.finding.text !== null && (
                  <>
                    : <code>{l.finding.text}</code>
                  </>
                )}
                {l.masked && (
                  <>
                    {' '}
                    <span class="badge badge-masked">
                      masked{l.masked.placeholder ? ` as ${l.masked.placeholder}` : ''}
                    </span>
                  </>
                )}{' '}
                <span class="muted">
                  (policy {l.policy.id}, rule {l.rule.index})
                </span>
              </li>
            ))}
          </ol>
        </section>
      )}

      {evaluation.masked && <MaskedConversation masked={evaluation.masked} />}

      {evaluation.policies.length === 0 && <p class="empty">No policy was evaluated: everything passes.</p>}
      {evaluation.policies.map((policy) => (
        <section
          key={`${policy.id}:${policy.draft}`}
          class="policy-result"
          aria-label={`Policy ${policy.id}`}
        >
          <h3>
            Policy <code>{policy.id}</code> {policy.draft ? '(draft)' : `revision ${policy.revision}`}{' '}
            <Badge value={policy.verdict} />{' '}
            <span class="muted">
              {policy.mode}, {policy.on_error}
            </span>
          </h3>
          <TableRegion label={`Rules of policy ${policy.id}`}>
            <table>
              <thead>
                <tr>
                  <th scope="col">Rule</th>
                  <th scope="col">Type</th>
                  <th scope="col">Expected</th>
                  <th scope="col">Status</th>
                  <th scope="col">Satisfied</th>
                  <th scope="col">Score</th>
                  <th scope="col">Threshold</th>
                  <th scope="col">Method</th>
                  <th scope="col">Findings</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {policy.rules.map((rule) => (
                  <tr key={rule.index} class={rule.status === 'masked' ? 'rule-masked' : undefined}>
                    <td>{rule.index}</td>
                    <td>{rule.type}</td>
                    <td>{rule.expected}</td>
                    <td>
                      <Badge value={rule.status} />
                    </td>
                    <td>{rule.satisfied ? 'yes' : 'no'}</td>
                    <td>{rule.score === null || rule.score === undefined ? '—' : rule.score.toFixed(3)}</td>
                    <td>{rule.threshold ?? '—'}</td>
                    <td>{rule.method ?? '—'}</td>
                    <td>{rule.findings?.length ?? 0}</td>
                    <td>{rule.reason ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        </section>
      ))}
    </div>
  )
}
