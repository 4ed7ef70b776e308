/**
 * The shapes the rule engines share. Everything under `src/rules/` is pure: no HTTP, no SQL, no
 * reading of globals; what a rule needs from outside (the judge, the time) is handed in.
 */

/** Where a text of the conversation comes from: `messages[index]` or `context[index]`. */
export type TextSource = 'messages' | 'context'

/** One text a rule reads: a message's content (parts joined with "\n") or a context document. */
export interface TargetText {
  source: TextSource
  index: number
  /** The message's role as read by targets (`developer` reads as `system`); `context` for documents. */
  role: 'system' | 'user' | 'assistant' | 'tool' | 'context'
  text: string
}

/** What a finding is: a PII kind, or what a keywords, regex or length rule found. */
export type FindingKind =
  | 'email'
  | 'phone'
  | 'credit_card'
  | 'iban'
  | 'ssn'
  | 'ip_address'
  | 'api_key'
  | 'keyword'
  | 'regex'
  | 'length'
  | 'toxicity'
  | 'prompt_injection'

/**
 * One thing a rule found. `start` and `end` count Unicode code points in the text named by
 * `source` and `index` (as Python slices do); `text` is the matched text (null for a length
 * finding, which spans the whole text and names its length in `end`).
 */
export interface Finding {
  kind: FindingKind
  source: TextSource
  index: number
  start: number
  end: number
  text: string | null
}

/** A rule's verdict, or why it has none. */
export type RuleStatus = 'pass' | 'fail' | 'skipped' | 'error'

/** What produced a verdict. */
export type RuleMethod = 'detector' | 'model' | 'judge' | 'guard'
