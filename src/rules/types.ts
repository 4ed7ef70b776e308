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
  /**
   * What the text is (docs/agents.md): a message's content (`message`, the default when absent),
   * a retrieved `document` (a context document or a tool's result: untrusted content, which a
   * detector may read in its document mode), or a tool call's `arguments` (the model's action).
   */
  kind?: TextKind
  /** For `arguments`: the call's position in `messages[index].tool_calls`. */
  tool_call?: number
  /**
   * Whether `text` is all ASCII, once a detector asked (`isAsciiText`, detectors/code-points.ts):
   * the pii and keywords rules of an evaluation reading the same text count it once.
   */
  ascii?: boolean | undefined
  /**
   * For `arguments` read from a conversation (arguments.ts): how `text`, the call's name and its
   * decoded arguments, maps back to the call as sent. Absent: `text` is the arguments as sent.
   */
  call?: ToolCallReading
}

/** A span of a tool call's text, as a finding in the call says it (arguments.ts). */
export interface CallSpan {
  /** Code points, in the arguments as sent (or in the name, for `path` `#name`). */
  start: number
  end: number
  /** The text there, as sent. */
  text: string
  /** The JSON Pointer of the value or member name the span starts in, or `#name`. */
  path: string
}

/** How a tool call's text maps back to the call as sent (arguments.ts). */
export interface ToolCallReading {
  /** The name of what was called, or null. */
  readonly name: string | null
  /** The arguments as sent (`function.arguments`, or a custom tool's `input`), or null. */
  readonly arguments: string | null
  /** The UTF-16 span [start, end) of the text, as a finding in the call says it. */
  locate(start: number, end: number): CallSpan
}

export type TextKind = 'message' | 'document' | 'arguments'

/** What a finding is: a PII kind, what a keywords, regex or length rule found, or a `tool` call a tools rule does not allow. */
export type FindingKind =
  | 'email'
  | 'phone'
  | 'credit_card'
  | 'iban'
  | 'ssn'
  | 'ip_address'
  | 'api_key'
  | 'crypto_wallet'
  | 'mac_address'
  | 'us_itin'
  | 'us_bank_routing'
  | 'uk_nino'
  | 'uk_nhs'
  | 'es_nif'
  | 'es_nie'
  | 'it_fiscal_code'
  | 'pl_pesel'
  | 'in_aadhaar'
  | 'in_pan'
  | 'sg_nric'
  | 'au_tfn'
  | 'au_abn'
  | 'au_medicare'
  | 'date_of_birth'
  | 'keyword'
  | 'regex'
  | 'length'
  | 'toxicity'
  | 'prompt_injection'
  | 'tool'

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
  /**
   * Present when the finding is in a tool call: the call's position in
   * `messages[index].tool_calls`; `start` and `end` then count in its `function.arguments` as
   * sent (or, with `path` `#name`, in its name), and `text` is what stands there as sent.
   */
  tool_call?: number
  /**
   * With `tool_call`: the JSON Pointer, inside the parsed arguments, of the value (or member name)
   * the finding starts in ("" for the whole arguments, or when they are not JSON), or `#name`
   * for a finding in the name of the function (or custom tool) called.
   */
  path?: string
}

/** A rule's verdict, or why it has none. */
export type RuleStatus = 'pass' | 'fail' | 'masked' | 'skipped' | 'error'

/** What produced a verdict. */
export type RuleMethod = 'detector' | 'model' | 'judge' | 'guard'
