import { readFileSync } from 'node:fs'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify'
import type { Logger } from 'pino'
import type { Config } from './config.js'
import { AppError } from './errors.js'
import { installAuth } from './http/auth.js'
import { installBodyBudget } from './http/body-budget.js'
import { clientErrorHandler, installClientErrors } from './http/client-errors.js'
import { consoleRoutes } from './http/console.js'
import { setStandardHeaders } from './http/headers.js'
import { installIdempotency } from './http/idempotency.js'
import { installJsonBodies } from './http/json-body.js'
import { addMethodNotAllowedRoutes, collectRoutes } from './http/method-not-allowed.js'
import { installMetrics } from './http/metrics.js'
import { installOpenApi } from './http/openapi.js'
import { frameworkErrorHandler, installProblemHandlers } from './http/problem.js'
import { installRateLimit } from './http/rate-limit.js'
import { requestId } from './http/request-id.js'
import { installValidators } from './http/validation.js'
import { type AccessFields, RequestLogger } from './logger.js'
import { operationsRoutes } from './routes/operations.js'
import { apiKeysRoutes } from './routes/v1/api-keys.js'
import { applicationsRoutes } from './routes/v1/applications.js'
import { chatCompletionsRoutes } from './routes/v1/chat-completions.js'
import { detectorsRoutes } from './routes/v1/detectors.js'
import { evaluationsRoutes } from './routes/v1/evaluations.js'
import { litellmRoutes } from './routes/v1/litellm.js'
import { policiesRoutes } from './routes/v1/policies.js'
import { policyTestsRoutes } from './routes/v1/policy-tests.js'
import { responsesRoutes } from './routes/v1/responses.js'
import { ApiKeyCreatedSchema, ApiKeySchema } from './schemas/api-keys.js'
import { ApplicationSchema } from './schemas/applications.js'
import { ChatCompletionProblemSchema } from './schemas/chat-completions.js'
import { ProblemSchema } from './schemas/common.js'
import { EvaluationSchema, LoggedEvaluationSchema } from './schemas/evaluations.js'
import { PolicyRuleSchema, PolicySchema } from './schemas/policies.js'
import { PolicyTestResultSchema, PolicyTestRunSchema, PolicyTestSchema } from './schemas/policy-tests.js'
import { PiiKindSchema, ToxicityCategorySchema } from './schemas/rule-vocabulary.js'
import type { Services } from './services/index.js'
import type { Store } from './store/database.js'
import { installHttpTracing } from './telemetry/http.js'

export const VERSION: string = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
).version

/**
 * One access-log line per request, when it completes, instead of Fastify's two, with the request
 * id like every other line written while the request is served. It is written by the root logger
 * (`reqId` among its fields): a request that logs nothing else makes no child logger.
 */
class AccessLog extends LogController {
  constructor(private readonly logger: FastifyBaseLogger | undefined) {
    super()
  }

  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const line: AccessFields = {
      reqId: String(request.id),
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    }
    if (error) {
      const { reqId: _, ...rest } = line
      reply.log.error({ ...rest, err: error }, 'request errored')
    } else this.logger?.info(line, 'request')
  }
}

export interface AppOptions {
  config: Config
  store: Store
  services: Services
  /** A pino logger; omitted, the app logs nothing (tests). */
  logger?: FastifyBaseLogger
}

/** Builds the whole HTTP application. It never listens: `server.ts` does. */
export async function buildApp({ config, store, services, logger }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(logger ? { loggerInstance: logger } : { logger: false }),
    bodyLimit: config.bodyLimit,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 4096 },
    genReqId: requestId,
    logController: new AccessLog(logger),
    // Every line written while serving a request goes through `request.log`, whose bindings carry
    // `reqId`: no call site names the request id by hand. Its pino child is made on first use.
    childLoggerFactory: (parent, bindings) =>
      new RequestLogger(parent as Logger, bindings) as unknown as FastifyBaseLogger,
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    requestIdHeader: false,
    // Requests still arriving on open connections during a graceful stop are served normally.
    return503OnClosing: false,
    // Slow or idle clients cannot hold a connection: headers must arrive within 10 s (or the
    // request timeout, if shorter), the whole request within the request timeout, and Node
    // checks those limits every second instead of every 30.
    http: {
      connectionsCheckingInterval: 1000,
      headersTimeout: Math.min(10_000, config.requestTimeoutMs),
      // A request without Host is answered by installClientErrors, as problem+json.
      requireHostHeader: false,
    },
    connectionTimeout: 60_000,
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: 5_000,
  }).withTypeProvider<TypeBoxTypeProvider>()

  installValidators(app)
  installHttpTracing(app)
  // Bodies in flight hold their bytes against the workspace's budget and the server's, from
  // after authentication until their request ends.
  installBodyBudget(app, config.bodyBudget)
  installProblemHandlers(app)
  installClientErrors(app)
  // Bodies are JSON only: Fastify's built-in text/plain parser would let text reach the handlers.
  app.removeContentTypeParser('text/plain')
  // Large JSON bodies are parsed in a thread of their own.
  installJsonBodies(app, config.bodyLimit)
  // PATCH accepts JSON merge patches (RFC 7396) under their own media type too; other methods
  // take plain JSON only.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.addContentTypeParser(
    'application/merge-patch+json',
    { parseAs: 'string', bodyLimit: config.bodyLimit },
    (request, body, done) => {
      if (request.method !== 'PATCH') {
        done(
          new AppError(
            'unsupported_media_type',
            'application/merge-patch+json is for PATCH; send application/json',
          ),
        )
        return
      }
      parseJson(request, body as string, done)
    },
  )
  // One onRequest step for every request: the standard headers, then authentication.
  const authenticate = installAuth(app, services.authentication)
  let draining = false
  app.addHook('onRequest', (request, reply, done) => {
    setStandardHeaders(request, reply)
    if (draining) reply.header('connection', 'close')
    authenticate(request, done)
  })

  // While a graceful stop drains requests, no keep-alive socket may hold the process open after
  // its last answer: requests that arrive now are answered with `Connection: close`, and
  // connections whose request in flight has been answered are closed as soon as they are idle.
  let closeIdle: NodeJS.Timeout | undefined
  app.addHook('preClose', async () => {
    draining = true
    closeIdle = setInterval(() => app.server.closeIdleConnections(), 50).unref()
  })
  app.addHook('onClose', async () => clearInterval(closeIdle))

  const shared = [
    ProblemSchema,
    ChatCompletionProblemSchema,
    ApplicationSchema,
    PolicyRuleSchema,
    PolicySchema,
    PiiKindSchema,
    ToxicityCategorySchema,
    ApiKeySchema,
    ApiKeyCreatedSchema,
    EvaluationSchema,
    LoggedEvaluationSchema,
    PolicyTestSchema,
    PolicyTestResultSchema,
    PolicyTestRunSchema,
  ]
  for (const schema of shared) app.addSchema(schema)
  // Response serialisers are compiled when a route first answers, not all at start-up: most
  // routes send stored JSON text and never use theirs.
  const compileSerializer = SerializerSelector()(app.getSchemas(), {})
  app.setSerializerCompiler((route) => {
    let serialize: ((data: unknown) => string) | undefined
    return (data) => {
      serialize ??= compileSerializer(route as Parameters<typeof compileSerializer>[0]) as (
        data: unknown,
      ) => string
      return serialize(data)
    }
  })
  await installOpenApi(app, VERSION)

  const routes = collectRoutes(app, (url) => !url.startsWith('/docs'))
  await installRateLimit(app, config)
  installIdempotency(app, services.idempotency)
  if (services.metrics) installMetrics(app, services.metrics)
  await app.register(operationsRoutes, { ready: () => store.ping() })
  await app.register(applicationsRoutes, { services })
  await app.register(policiesRoutes, { services })
  await app.register(detectorsRoutes, { services })
  await app.register(apiKeysRoutes, { services })
  // The web console's built files; dist/ sits beside this module in src/ and in the build alike.
  await app.register(consoleRoutes, { root: new URL('../dist/console/', import.meta.url) })
  // Routes with a body limit of their own declare it (docs/conventions.md); the rest take BODY_LIMIT_BYTES.
  await app.register(evaluationsRoutes, { services, bodyLimit: config.bodyLimits.evaluations })
  await app.register(policyTestsRoutes, { services })
  await app.register(chatCompletionsRoutes, {
    services,
    bodyLimit: config.bodyLimits.chatCompletions,
    providers: config.providers,
  })
  await app.register(responsesRoutes, {
    services,
    bodyLimit: config.bodyLimits.chatCompletions,
    providers: config.providers,
  })
  await app.register(litellmRoutes, { services })
  await app.after()
  addMethodNotAllowedRoutes(app, routes)

  // Expired idempotency keys are deleted at start-up and every ten minutes after.
  let purgeTimer: NodeJS.Timeout | undefined
  const purge = () =>
    services.idempotency
      .purgeExpired()
      .catch((error: unknown) => app.log.warn({ err: error }, 'idempotency purge failed'))
  app.addHook('onReady', async () => {
    void purge()
    purgeTimer = setInterval(purge, 10 * 60_000).unref()
  })
  app.addHook('onClose', async () => clearInterval(purgeTimer))
  // Evaluation log entries past EVALUATION_RETENTION_DAYS are deleted in the background, in small batches.
  app.addHook('onReady', async () =>
    services.evaluationLog.startRetention((error) =>
      app.log.warn({ err: error }, 'evaluation log retention failed'),
    ),
  )
  app.addHook('onClose', () => services.evaluationLog.stopRetention())
  app.addHook('onClose', () => services.evaluator.closePool())
  return app
}
