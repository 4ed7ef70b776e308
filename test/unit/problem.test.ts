import type { FastifyRequest } from 'fastify'
import { describe, expect, it, vi } from 'vitest'
import { AppError } from '../../src/errors.js'
import { toAppError } from '../../src/http/problem.js'

/** A request whose log records what is written to it. */
const requestLogging = () => {
  const error = vi.fn()
  return { request: { log: { error } } as unknown as FastifyRequest, error }
}

describe('toAppError', () => {
  it('logs the cause of an internal_error, which only its detail reaches the client', () => {
    const cause = new RangeError('Maximum call stack size exceeded')
    const failure = new AppError('internal_error', 'The request could not be serialised')
    failure.cause = cause
    const { request, error } = requestLogging()
    expect(toAppError(failure, request)).toBe(failure)
    expect(error).toHaveBeenCalledWith({ err: cause }, 'internal error')
  })

  it('logs nothing for the errors a client caused', () => {
    const { request, error } = requestLogging()
    const failure = new AppError('validation_error', 'x')
    expect(toAppError(failure, request)).toBe(failure)
    expect(error).not.toHaveBeenCalled()
  })
})
