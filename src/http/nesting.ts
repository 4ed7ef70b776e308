import type { FastifyRequest } from 'fastify'
import { invalid } from '../errors.js'
import { MAX_NESTING_DEPTH, tooDeep } from '../schemas/nesting.js'

export { MAX_NESTING_DEPTH }

/**
 * A preValidation step for a route that passes JSON on: 422 pointing at the first value nested
 * deeper than MAX_NESTING_DEPTH. A body that is not an object is left to the schema (400).
 */
export async function limitNesting(request: FastifyRequest): Promise<void> {
  const { body } = request
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return
  const pointer = tooDeep(body, MAX_NESTING_DEPTH)
  if (pointer !== null)
    throw invalid([{ pointer, detail: `is nested deeper than ${MAX_NESTING_DEPTH} levels` }])
}
