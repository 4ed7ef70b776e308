import type { FastifyRequest } from 'fastify'

/**
 * Runs `work` with a signal that aborts when the client goes away before its answer (the
 * connection closes while the request is unfinished or torn down), so that judge calls still
 * under way for it are abandoned.
 */
export async function untilClientLeaves<T>(
  request: FastifyRequest,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const abandoned = new AbortController()
  const onClose = () => {
    if (!request.raw.complete || request.raw.destroyed) abandoned.abort()
  }
  request.raw.socket?.once('close', onClose)
  try {
    return await work(abandoned.signal)
  } finally {
    request.raw.socket?.off('close', onClose)
  }
}
