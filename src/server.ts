import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { buildApp } from './app.js'
import type { Config } from './config.js'
import { createLogger } from './logger.js'
import { type MetricsServer, startMetricsServer } from './metrics.js'
import { shippedSecondStage } from './models/second-stage.js'
import { shippedClassifiers } from './models/shipped.js'
import { defaultDetector } from './services/detectors.service.js'
import { createServices } from './services/index.js'
import { prepareStore } from './services/store-setup.js'
import { openStore } from './store/database.js'
import { startTelemetry } from './telemetry/index.js'

/** A listener could not bind its address: one line naming the setting to change. */
export class ListenError extends Error {
  override name = 'ListenError'
}

/** What the operator reads when a listener fails to bind: the settings behind it, and what to do. */
function listenError(
  error: unknown,
  where: { host: string; port: number; hostSetting: string; portSetting: string; instead: string },
): ListenError {
  const { host, port, hostSetting, portSetting, instead } = where
  if ((error as NodeJS.ErrnoException | null)?.code === 'EADDRINUSE') {
    return new ListenError(
      `port ${port} (${portSetting}) on ${host} is already in use; set ${portSetting} to ${instead}`,
    )
  }
  const reason = error instanceof Error ? error.message : String(error)
  return new ListenError(`cannot listen on ${host}:${port} (${hostSetting}, ${portSetting}): ${reason}`)
}

/**
 * Starts Warden: store, migrations, first admin key, HTTP. The only place that listens and the
 * only place that handles process signals.
 */
export async function serve(config: Config): Promise<FastifyInstance> {
  const logger = createLogger(config.logLevel)
  // However the process ends (a stop, a failed start, a fatal error, process.exit), the lines the
  // logger still holds are written first.
  process.on('exit', () => logger.flush())
  // The offline classifiers' weights are checked before anything else: a damaged file stops
  // start-up here rather than failing toxicity and prompt_injection rules later.
  const classifiers = shippedClassifiers()
  // The second stage's network, when asked for: checked the same way, its session made once for
  // this thread (and once in each pool worker).
  const second = config.promptInjectionSecondStage ? await shippedSecondStage() : null
  // Traces over OTLP/HTTP when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set (docs/tracing.md).
  const telemetry = startTelemetry(config.tracing)
  if (telemetry) logger.info('tracing: spans exported over OTLP/HTTP')
  const store = openStore(config.store)
  const { migrations, documents } = await prepareStore(store)
  if (migrations.length > 0) logger.info({ migrations }, 'store migrated')
  if (documents > 0) logger.info({ documents }, 'stored documents rendered again')
  const services = createServices({ store, config, classifiers, second })
  logDetectors(logger, config)
  const { createdSecret } = await services.operator.bootstrap(config.adminKey)
  await services.evaluator.warmUp()
  const app = await buildApp({ config, store, services, logger })

  let metricsServer: MetricsServer | null = null
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'stopping: finishing requests in flight')
    services.evaluator.stop()
    const timer = setTimeout(() => {
      logger.error('requests in flight did not finish in time; exiting')
      process.exit(1)
    }, config.shutdownGraceSeconds * 1000)
    timer.unref()
    try {
      await metricsServer?.close()
      await app.close()
      await telemetry?.shutdown()
      await store.close()
      logger.info('stopped')
      // The lines the logger still holds are written as the process exits (above).
      process.exit(0)
    } catch (error) {
      logger.error({ err: error }, 'error while stopping')
      process.exit(1)
    }
  }
  process.once('SIGTERM', () => void stop('SIGTERM'))
  process.once('SIGINT', () => void stop('SIGINT'))

  const showCreatedKey = () => {
    if (!createdSecret) return
    process.stdout.write(
      `\nWarden created workspace "default" and its first admin API key.\nIt is shown only this once; store it now:\n\n    ${createdSecret}\n\nUse it as: Authorization: Bearer ${createdSecret}\n\n`,
    )
  }
  // Both ports are bound before either is said to be listening: a start that fails on one never
  // announced the other (the API's line is Fastify's, written as it binds: metrics bind first).
  try {
    if (services.metrics) {
      metricsServer = await startMetricsServer(
        services.metrics,
        config.metricsHost,
        config.metricsPort,
      ).catch((error: unknown) => {
        throw listenError(error, {
          host: config.metricsHost,
          port: config.metricsPort,
          hostSetting: 'METRICS_HOST',
          portSetting: 'METRICS_PORT',
          instead: 'a free port, or to 0 to turn metrics off',
        })
      })
    }
    await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
      throw listenError(error, {
        host: config.host,
        port: config.port,
        hostSetting: 'HOST',
        portSetting: 'PORT',
        instead: 'a free port',
      })
    })
    if (metricsServer)
      logger.info({ host: config.metricsHost, port: metricsServer.port }, 'metrics listening on /metrics')
  } catch (error) {
    await metricsServer?.close()
    // The store holds the new key now, and a later start will not create another: show it even
    // though this start fails.
    showCreatedKey()
    throw error
  }
  // Shown in the same turn as the listening line is logged, and so before it on standard output
  // (the logger writes its lines at the end of the turn): whoever waits for that line has the key.
  showCreatedKey()
  // The evaluation pool's workers load the offline models (about 0.5 s each) after the server
  // listens, not before: start-up is not held, and evaluations run inline until a worker is up.
  services.evaluator.startPool()
  return app
}

/**
 * Says once, at start-up, what scores the rules that name no detector, and which guard detectors
 * are configured: configuring a judge moves every toxicity and prompt_injection rule without
 * `detector` onto it, which nothing else would show.
 */
function logDetectors(logger: Pick<Logger, 'info'>, config: Config): void {
  const detector = defaultDetector(config.judge !== null)
  logger.info(
    { default_detector: detector, guards: config.guards.names },
    detector === 'judge'
      ? 'toxicity and prompt_injection rules without detector are scored by the judge (JUDGE_BASE_URL is set); a rule with detector "model" keeps the offline model'
      : 'toxicity and prompt_injection rules without detector are scored by the offline model (no judge configured)',
  )
}
