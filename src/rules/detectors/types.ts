import type { Finding, TargetText } from '../types.js'

/** A compiled matcher: all findings in one text, in order of start offset. */
export type TextMatcher = (text: TargetText) => Finding[]

/** A scorer's verdict on one text: a score in 0..1, why, and the spans that raised it. */
export interface TextScore {
  score: number
  reason: string | null
  findings: Finding[]
}
