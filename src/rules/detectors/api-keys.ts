/**
 * API keys and other credentials by their providers' published formats. Each pattern starts
 * with a literal prefix, so V8 skips to candidates instead of trying every position, and every
 * quantifier is bounded or over a class the next token cannot start with, so no pattern can
 * backtrack more than a constant per position (test/unit/rules/pii-adversarial.test.ts).
 *
 * Why not @secretlint/core on the hot path: its lintSource is async and file-oriented (a source
 * with a file path, a config of rule creators, a message list to translate back); measured with
 * the recommended preset 11.7.1 (the last release for Node 20; 12+ needs Node 22) it costs
 * 0.27 ms for a 1 KB text and 32 ms for 100 KB, against 0.018 ms and 1.7 ms for these patterns
 * (bench/detectors.mjs), and an await per text. It serves instead as an
 * oracle in the tests: on a corpus of format-correct fake keys this detector finds at least
 * everything the recommended preset finds (test/unit/rules/api-keys.test.ts).
 */

/** A credential found in a text: UTF-16 span [start, end). */
export interface Span {
  start: number
  end: number
}

/**
 * Plain patterns, the whole match being the credential, each behind a gate: a literal the
 * pattern cannot match without (`includes` finds it at memory speed), so that prose, where keys
 * are rare, costs a few `includes` instead of a regex pass per provider. A `_` gates every
 * pattern whose prefix holds one.
 */
const KEY_PATTERNS: readonly { gate: string | null; pattern: RegExp }[] = [
  // Anthropic: sk-ant-api03-…, sk-ant-admin01-…
  { gate: 'sk-ant-', pattern: /(?<![\w-])sk-ant-[a-z]{2,10}\d{0,3}-[A-Za-z0-9_-]{32,400}(?![\w-])/g },
  // OpenAI: legacy sk-… (48 base62), project, service account and admin keys.
  {
    gate: 'sk-',
    pattern: /(?<![\w-])sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,400}(?![\w-])/g,
  },
  // AWS access key ids (and the other unique-id prefixes that sign requests).
  {
    gate: null,
    pattern:
      /(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])/g,
  },
  // GitHub: classic tokens and fine-grained personal access tokens.
  { gate: '_', pattern: /(?<![\w])gh[pousr]_[A-Za-z0-9_]{36,255}(?![\w])/g },
  { gate: '_', pattern: /(?<![\w])github_pat_[A-Za-z0-9_]{22,255}(?![\w])/g },
  // Slack: bot, user, app-level, refresh and configuration tokens; incoming webhooks.
  { gate: 'xox', pattern: /(?<![\w-])xox[abposre]-[A-Za-z0-9-]{10,250}(?![\w-])/g },
  { gate: 'xapp-', pattern: /(?<![\w-])xapp-\d-[A-Za-z0-9-]{10,250}(?![\w-])/g },
  {
    gate: '://',
    pattern: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/]{10,200}/gi,
  },
  // Google API keys.
  { gate: 'AIza', pattern: /(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])/g },
  // Stripe secret, restricted and publishable keys, live and test.
  { gate: '_', pattern: /(?<![\w])(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,247}(?![\w])/g },
  // npm, Linear, SendGrid, Shopify, 1Password service accounts.
  { gate: '_', pattern: /(?<![\w])npm_[A-Za-z0-9_]{36}(?![\w])/g },
  { gate: '_', pattern: /(?<![\w])lin_api_[A-Za-z0-9_]{32,128}(?![\w])/g },
  { gate: 'SG.', pattern: /(?<![\w.])SG\.[\w-]{10,128}\.[\w-]{10,128}(?![\w-])/g },
  { gate: '_', pattern: /(?<![\w])shp(?:at|ca|pa|ss)_[A-Za-z0-9]{32,64}(?![\w])/g },
  { gate: '_', pattern: /(?<![\w])ops_ey[A-Za-z0-9+/=]{100,2000}(?![A-Za-z0-9+/=])/g },
]

/** The distinct gates of KEY_PATTERNS. */
const GATES: readonly string[] = [
  ...new Set(KEY_PATTERNS.flatMap(({ gate }) => (gate === null ? [] : [gate]))),
]
/** Each pattern's gate in GATES, or -1. */
const GATE_OF: readonly number[] = KEY_PATTERNS.map(({ gate }) => (gate === null ? -1 : GATES.indexOf(gate)))

/** An OpenAI-style `sk-` body is a key only when it mixes digits and capitals, unlike words. */
const OPENAI_PREFIX = /^sk-(?!ant-)/
const DIGIT = /\d/
const UPPER = /[A-Z]/

/** An AWS secret access key, after the name it is given in configuration: only the value counts. */
const AWS_SECRET_GATE = /secret/i
const AWS_SECRET =
  /aws_?secret_?access_?key["']?\s{0,8}[:=]\s{0,8}["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi

/** scheme://user:password@host — the user and password are the credential. */
const URL_CREDENTIALS =
  /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/([^\s:/@?#]{1,256}:[^\s/@?#]{1,256})@(?=[\w[])/g

const PEM_BEGIN = /-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----/g
const PEM_END = /-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----/g
/** One line of a key block's body: base64 after a line break (or the `\n` of a key inside JSON). */
const PEM_LINE = /(?:\r?\n|\\n)[A-Za-z0-9+/=]+(?=\r?\n|\\n|$)/y

/**
 * Private key blocks, BEGIN to END. The END is searched for once from each BEGIN and the search
 * for the next BEGIN goes on after it: a lazy `BEGIN[\s\S]*?END` regex would rescan the rest of
 * the text from every BEGIN that has no END (quadratic on '-----BEGIN ' repeated). A block
 * without its END is a leak all the same: the header and the body that follows are reported.
 */
function findPrivateKeys(text: string, spans: Span[]): void {
  if (!text.includes('-----BEGIN')) return
  PEM_BEGIN.lastIndex = 0
  let endless = false
  for (let begin = PEM_BEGIN.exec(text); begin !== null; begin = PEM_BEGIN.exec(text)) {
    const from = begin.index + begin[0].length
    let to = -1
    if (!endless) {
      PEM_END.lastIndex = from
      const end = PEM_END.exec(text)
      if (end === null) endless = true
      else to = end.index + end[0].length
    }
    if (to < 0) {
      // The body: whole lines of base64, up to the first line that is not.
      to = from
      PEM_LINE.lastIndex = from
      while (PEM_LINE.exec(text) !== null) to = PEM_LINE.lastIndex
    }
    spans.push({ start: begin.index, end: to })
    PEM_BEGIN.lastIndex = Math.max(to, from)
  }
}

/** Every credential in `text`, in order of start, without overlaps. */
export function findApiKeys(text: string): Span[] {
  const spans: Span[] = []
  // Each distinct gate is looked for once (seven patterns share `_`).
  const gates = GATES.map((gate) => text.includes(gate))
  for (let i = 0; i < KEY_PATTERNS.length; i++) {
    const gate = GATE_OF[i] as number
    if (gate >= 0 && !gates[gate]) continue
    const pattern = (KEY_PATTERNS[i] as (typeof KEY_PATTERNS)[number]).pattern
    pattern.lastIndex = 0
    for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
      const key = m[0]
      if (OPENAI_PREFIX.test(key) && !(DIGIT.test(key) && UPPER.test(key))) continue
      spans.push({ start: m.index, end: m.index + key.length })
    }
  }
  AWS_SECRET.lastIndex = 0
  const awsSecret = AWS_SECRET_GATE.test(text)
  for (let m = awsSecret ? AWS_SECRET.exec(text) : null; m !== null; m = AWS_SECRET.exec(text)) {
    const value = m[1] as string
    const end = m.index + m[0].length
    spans.push({ start: end - value.length, end })
  }
  URL_CREDENTIALS.lastIndex = 0
  const url = text.includes('://')
  for (let m = url ? URL_CREDENTIALS.exec(text) : null; m !== null; m = URL_CREDENTIALS.exec(text)) {
    const credentials = m[1] as string
    const end = m.index + m[0].length - 1
    spans.push({ start: end - credentials.length, end })
  }
  findPrivateKeys(text, spans)
  if (spans.length < 2) return spans
  spans.sort((a, b) => a.start - b.start || b.end - a.end)
  const kept: Span[] = []
  let reached = -1
  for (const span of spans) {
    if (span.start >= reached) {
      kept.push(span)
      reached = span.end
    }
  }
  return kept
}
