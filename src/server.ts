import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import type { Config } from './config.js'
import { createLogger } from './logger.js'
import { createServices } from './services/index.js'
import { openStore } from './store/database.js'
import { migrateToLatest } from './store/migrations.js'

/**
 * Starts Warden: store, migrations, first admin key, HTTP. The only place that listens and the
 * only place that handles process signals.
 */
export async function serve(config: Config): Promise<FastifyInstance> {
  const logger = createLogger(config.logLevel)
  const store = openStore(config.store)
  const applied = await migrateToLatest(store)
  if (applied.length > 0) logger.info({ migrations: applied }, 'store migrated')
  const services = createServices(store)
  const { createdSecret } = await services.keys.bootstrap(config.adminKey)
  const app = await buildApp({ config, store, services, logger })

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'stopping: finishing requests in flight')
    const timer = setTimeout(() => {
      logger.error('requests in flight did not finish in time; exiting')
      process.exit(1)
    }, config.shutdownGraceSeconds * 1000)
    timer.unref()
    try {
      await app.close()
      await store.close()
      logger.info('stopped')
      // The logger writes out the lines it still holds as the process exits (logger.ts).
      process.exit(0)
    } catch (error) {
      logger.error({ err: error }, 'error while stopping')
      process.exit(1)
    }
  }
  process.once('SIGTERM', () => void stop('SIGTERM'))
  process.once('SIGINT', () => void stop('SIGINT'))

  await app.listen({ port: config.port, host: config.host })
  if (createdSecret) {
    process.stdout.write(
      `\nWarden created workspace "default" and its first admin API key.\nIt is shown only this once; store it now:\n\n    ${createdSecret}\n\nUse it as: Authorization: Bearer ${createdSecret}\n\n`,
    )
  }
  return app
}
