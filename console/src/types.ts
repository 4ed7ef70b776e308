// The API's shapes, as CONTRACT.md sections 3, 4, 8 and 10 define them. The lists below are the
// API's own, held to them by test/unit/console-types.test.ts.

export interface ApplicationParameters {
  system_prompt: string | null
  temperature: number | null
  max_tokens: number | null
  top_p: number | null
  top_k: number | null
}

export interface Application {
  id: string
  name: string
  description: string
  provider: string | null
  model: string | null
  parameters: ApplicationParameters | null
  created: number
  updated: number
}

export const RULE_TYPES = [
  'pii',
  'keywords',
  'regex',
  'length',
  'toxicity',
  'prompt_injection',
  'factuality',
  'relevance',
  'custom',
] as const
export type RuleType = (typeof RULE_TYPES)[number]

export const TARGETS = ['input', 'output', 'user', 'assistant', 'system', 'context'] as const
export type Target = (typeof TARGETS)[number]

export const PII_KINDS = ['email', 'phone', 'credit_card', 'iban', 'ssn', 'ip_address', 'api_key'] as const
export const TOXICITY_CATEGORIES = [
  'hate',
  'harassment',
  'sexual',
  'violence',
  'self_harm',
  'profanity',
] as const

export interface PolicyRule {
  type: RuleType
  expected: 'pass' | 'fail'
  value: string | null
  threshold: number | null
  flagged: string[] | null
}

export interface Policy {
  id: string
  application_id: string
  rules: PolicyRule[]
  target: Target[]
  definition: string | null
  override_response: string | null
  mode?: 'enforce' | 'monitor'
  on_error?: 'fail_closed' | 'fail_open'
  revision: number
  created: number
  updated: number
}

export interface Message {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool'
  content: string
}

export interface Finding {
  kind?: string
  source: 'messages' | 'context'
  index: number
  start: number
  end: number
  text?: string
  [more: string]: unknown
}

export interface RuleResult {
  index: number
  type: RuleType
  expected: 'pass' | 'fail'
  status: 'pass' | 'fail' | 'skipped' | 'error'
  satisfied: boolean
  score: number | null
  threshold: number | null
  method: 'detector' | 'model' | 'judge' | null
  reason: string | null
  findings: Finding[]
}

export interface PolicyResult {
  id: string
  revision: number | null
  mode: 'enforce' | 'monitor'
  on_error: 'fail_closed' | 'fail_open'
  draft: boolean
  verdict: 'pass' | 'fail' | 'error'
  rules: RuleResult[]
}

export interface Evaluation {
  id: string
  application_id: string
  created: number
  verdict: 'pass' | 'fail'
  action: 'allow' | 'override' | 'block'
  override_response: string | null
  latency_ms: number
  policies: PolicyResult[]
  redacted?: { messages: Message[]; context: string[] } | null
  /** Logged evaluations (section 10) may carry the texts they were asked about. */
  messages?: Message[] | null
  context?: string[] | null
  [more: string]: unknown
}

export interface TestCase {
  id: string
  name: string
  messages: Message[]
  context: string[] | null
  expected: { verdict: 'pass' | 'fail'; rules?: { index: number; status: string }[] | null }
  [more: string]: unknown
}

export interface TestResult {
  test_id: string
  outcome: 'passed' | 'failed' | 'skipped'
  expected: TestCase['expected']
  actual: { verdict: string; rules: { index: number; status: string }[] }
  evaluation?: Evaluation
}

export interface TestRun {
  policy_id: string
  revision: number | null
  summary: { total: number; passed: number; failed: number; skipped: number }
  results: TestResult[]
}
