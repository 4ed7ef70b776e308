import { type Readable, Transform } from 'node:stream'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { AppError, invalid } from '../errors.js'
import { ArrayLimitScan, type Shape, shapeOf } from './array-limits.js'
import { formatBytes, refusedWhileArriving } from './problem.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The array limits of the route's body schema, read as a large body arrives (array-limits.ts). */
    arrayLimits?: Shape
  }
  interface FastifyInstance {
    /** The request body bytes in flight, per workspace and in all. */
    bodyBudget: BodyBudget
  }
}

/** A body this large, or of unknown length, is read for its array limits as it arrives. */
export const SCAN_FROM_BYTES = 256 * 1024

/** Seconds a refused client should wait: bodies in flight are answered within a few seconds. */
const RETRY_AFTER = '1'

type Over = 'workspace' | 'total'

/**
 * The bytes of request bodies in flight, per workspace and in all, each under its budget
 * (WORKSPACE_BODY_BUDGET_BYTES, BODY_BUDGET_BYTES). A body holds its bytes from the moment they
 * are declared (Content-Length) or received (a chunked body) until its request ends, however it
 * ends: what its parsing, its evaluation and its upstream call keep alive is held meanwhile.
 */
export class BodyBudget {
  private total = 0
  private readonly workspaces = new Map<string, number>()

  constructor(readonly limits: Config['bodyBudget']) {}

  /** Holds `bytes` more for `workspace` (null: a request no workspace made); the budget it would pass, or null once held. */
  take(workspace: string | null, bytes: number): Over | null {
    const held = workspace === null ? 0 : (this.workspaces.get(workspace) ?? 0)
    if (workspace !== null && held + bytes > this.limits.workspace) return 'workspace'
    if (this.total + bytes > this.limits.total) return 'total'
    this.total += bytes
    if (workspace !== null) this.workspaces.set(workspace, held + bytes)
    return null
  }

  /** Gives back bytes `take` held. */
  give(workspace: string | null, bytes: number): void {
    this.total -= bytes
    if (workspace === null) return
    const held = (this.workspaces.get(workspace) ?? 0) - bytes
    if (held > 0) this.workspaces.set(workspace, held)
    else this.workspaces.delete(workspace)
  }

  /** The bytes held: by one workspace, or by all requests. */
  held(workspace?: string): number {
    return workspace === undefined ? this.total : (this.workspaces.get(workspace) ?? 0)
  }
}

/** What one request holds, given back once when it ends. */
class Hold {
  private bytes = 0
  private ended = false

  constructor(
    private readonly budget: BodyBudget,
    private readonly workspace: string | null,
  ) {}

  grow(bytes: number): Over | null {
    if (this.ended) return null
    const over = this.budget.take(this.workspace, bytes)
    if (over === null) this.bytes += bytes
    return over
  }

  end(): void {
    if (this.ended) return
    this.ended = true
    this.budget.give(this.workspace, this.bytes)
  }
}

function overBudget(over: Over, limits: Config['bodyBudget']): AppError {
  const detail =
    over === 'workspace'
      ? `This workspace's request bodies in flight would pass its budget of ${formatBytes(limits.workspace)} (WORKSPACE_BODY_BUDGET_BYTES); retry once some are answered`
      : `The request bodies in flight would pass this server's budget of ${formatBytes(limits.total)} (BODY_BUDGET_BYTES); retry shortly`
  return new AppError('unavailable', detail, undefined, { 'retry-after': RETRY_AFTER })
}

/**
 * Installs the body budget, as a preParsing step (after authentication has named the workspace,
 * before any byte of the body is read), and reads the array limits of each route's body schema.
 * A body declared larger than its route's limit is left to the parser's 413; one that does not
 * fit the budget is answered 503 `unavailable` with Retry-After at once, without being read.
 */
export function installBodyBudget(app: FastifyInstance, limits: Config['bodyBudget']): BodyBudget {
  const budget = new BodyBudget(limits)
  app.decorate('bodyBudget', budget)
  app.addHook('onRoute', (route) => {
    const body = route.schema?.body
    const shape = body ? shapeOf(body, (ref) => app.getSchema(ref)) : null
    if (shape) route.config = { ...route.config, arrayLimits: shape }
  })
  app.addHook('preParsing', (request, reply, payload, done) => {
    const declared = request.headers['content-length']
    const chunked = request.headers['transfer-encoding'] !== undefined
    if ((declared === undefined || declared === '0') && !chunked) return done(null, payload)
    const length = chunked ? Number.NaN : Number(declared)
    const route = request.routeOptions
    // Fastify refuses a declared length over the limit before reading a byte.
    if (length > route.bodyLimit) return done(null, payload)
    const hold = new Hold(budget, workspaceOf(request))
    // The answer sent, or the connection gone: whichever comes first ends the request.
    const end = () => hold.end()
    reply.raw.once('finish', end)
    reply.raw.once('close', end)
    if (!chunked) {
      const over = hold.grow(length)
      if (over !== null) return done(overBudget(over, limits))
    }
    const shape = route.config.arrayLimits
    const scan = shape && (chunked || length >= SCAN_FROM_BYTES) ? new ArrayLimitScan(shape) : null
    if (scan === null && !chunked) return done(null, payload)
    done(null, meter(payload, chunked ? hold : null, scan, limits))
  })
  return budget
}

const workspaceOf = (request: FastifyRequest): string | null => request.principal?.workspaceId ?? null

/**
 * The body as it arrives, counted into `hold` (a chunked body) and read by `scan`. What either
 * refuses fails the body's parsing with that answer; the rest of the body is then read and
 * dropped, never buffered.
 */
function meter(
  payload: Readable,
  hold: Hold | null,
  scan: ArrayLimitScan | null,
  limits: Config['bodyBudget'],
): Transform {
  let refused = false
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (refused) return callback()
      const over = hold?.grow(chunk.length) ?? null
      const problem = over === null ? scan?.write(chunk) : null
      if (over === null && !problem) return callback(null, chunk)
      refused = true
      const error =
        over !== null ? overBudget(over, limits) : invalid([problem as NonNullable<typeof problem>])
      refusedWhileArriving.add(error)
      payload.unpipe(stream)
      payload.resume()
      callback(error)
    },
  })
  // After the parser gave up (a 413, a refusal), errors have no one to tell.
  stream.on('error', () => {})
  payload.once('error', (error) => stream.destroy(error))
  payload.pipe(stream)
  return stream
}
