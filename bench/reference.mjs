// The reference case of the evaluation benchmarks under the names the mixed-load and cost
// benchmarks use; the cases themselves live in bench/evaluation-cases.mjs.
import { BIG_MESSAGES, REFERENCE_MESSAGES, REFERENCE_POLICY } from './evaluation-cases.mjs'

export { PHRASES, textBytes } from './evaluation-cases.mjs'
export const referencePolicy = REFERENCE_POLICY
export const referenceMessages = REFERENCE_MESSAGES
export const bigMessages = BIG_MESSAGES
export const REFERENCE_BODY = JSON.stringify({ messages: referenceMessages })
export const BIG_BODY = JSON.stringify({ messages: bigMessages })
