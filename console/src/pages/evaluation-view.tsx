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
}

function locate(evaluation: Evaluation): Located[] {
  const out: Located[] = []
  for (const policy of evaluation.policies) {
    for (const rule of policy.rules) {
      for (const finding of rule.findings ?? []) out.push({ finding, policy, rule, number: out.length + 1 })
    }
  }
  return out
}

function label(l: Located): string {
  return `${l.finding.kind ?? l.rule.type} (policy ${l.policy.id}, rule ${l.rule.index})`
}

/** The labels a redacted text carries where findings were: a pii kind, KEYWORD or REGEX, in capitals. */
const REDACTION_LABEL = new RegExp(
  `\\[(?:${[...piiKindValues, 'keyword', 'regex'].map((kind) => kind.toUpperCase()).join('|')})\\]`,
  'gu',
)

/**
 * The redaction labels in a redacted text as spans, in code points. Findings' offsets count in
 * the original text, so on a redacted one the labels are what is marked.
 */
function labelSpans(text: string): Span<Located>[] {
  const spans: Span<Located>[] = []
  for (const match of text.matchAll(REDACTION_LABEL)) {
    const start = [...text.slice(0, match.index)].length
    const kind = match[0].slice(1, -1).toLowerCase()
    spans.push({
      start,
      end: start + match[0].length,
      tag: {
        finding: { kind, source: 'messages', index: 0, start, end: start + match[0].length, text: match[0] },
        policy: { id: 'redacted' } as PolicyResult,
        rule: { index: -1, type: 'pii' } as RuleResult,
        number: 0,
      },
    })
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
              class={`finding${segment.tags.length > 1 ? ' overlap' : ''}`}
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

/**
 * An evaluation's outcome: verdict and action, the conversation with every finding highlighted,
 * and each policy's rules with status, score and method.
 */
export function EvaluationView({
  evaluation,
  messages,
  context,
  redacted = false,
}: {
  evaluation: Evaluation
  messages: Message[] | null
  context: string[] | null
  /** The texts are redacted: findings' offsets do not apply to them, their labels are marked. */
  redacted?: boolean
}) {
  const located = locate(evaluation)
  const spansFor = (source: 'messages' | 'context', index: number, text: string): Span<Located>[] =>
    redacted
      ? labelSpans(text)
      : located
          .filter((l) => l.finding.source === source && l.finding.index === index)
          .map((l) => ({ start: l.finding.start, end: l.finding.end, tag: l }))

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
            {redacted ? 'Conversation, as logged (redacted)' : 'Conversation, with findings highlighted'}
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
                )}{' '}
                <span class="muted">
                  (policy {l.policy.id}, rule {l.rule.index})
                </span>
              </li>
            ))}
          </ol>
        </section>
      )}

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
                  <tr key={rule.index}>
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
