import type { Context } from '@opentelemetry/api'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { endHttpSpan, type Span, startHttpSpan, tracingOn } from './index.js'

/** Each traced request's span, its context, and the error it answered if any. */
const traced = new WeakMap<FastifyRequest, { span: Span; context: Context; error?: unknown }>()

/**
 * The span context of a request, for spans made while serving it (`withContext`), or null when
 * tracing is off or the request is not traced.
 */
export function requestTraceContext(request: FastifyRequest): Context | null {
  return traced.get(request)?.context ?? null
}

/** The workspace of the request's key, once authenticated. */
const workspaceOf = (request: FastifyRequest): string | undefined =>
  (request.principal as FastifyRequest['principal'] | null)?.workspaceId

/**
 * One server span per HTTP request, continuing the caller's W3C trace: started when the request
 * arrives, ended with the status it answered and the caller's workspace (or when the client
 * left). Off, the hooks return at once.
 */
export function installHttpTracing(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    if (tracingOn()) {
      const started = startHttpSpan(request.method, request.routeOptions.url, request.headers)
      if (started) traced.set(request, started)
    }
    done()
  })
  app.addHook('onError', (request, _reply, error, done) => {
    const entry = traced.get(request)
    if (entry) entry.error = error
    done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    const entry = traced.get(request)
    if (entry) {
      traced.delete(request)
      endHttpSpan(entry.span, {
        statusCode: reply.statusCode,
        workspaceId: workspaceOf(request),
        error: entry.error,
      })
    }
    done()
  })
  app.addHook('onRequestAbort', (request, done) => {
    const entry = traced.get(request)
    if (entry) {
      traced.delete(request)
      const workspaceId = workspaceOf(request)
      if (workspaceId) entry.span.setAttribute('warden.workspace.id', workspaceId)
      entry.span.setAttribute('warden.client_gone', true)
      entry.span.end()
    }
    done()
  })
}
