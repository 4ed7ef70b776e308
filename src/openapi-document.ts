import { buildApp } from './app.js'
import { loadConfig } from './config.js'
import { createServices } from './services/index.js'
import { prepareStore } from './services/store-setup.js'
import { openStore } from './store/database.js'

/**
 * The OpenAPI document a server in its default configuration serves at /openapi.json, built
 * without listening: the whole app on an empty in-memory SQLite store, made ready, then asked for
 * its document. `npm run generate:client` writes it, and the typed client's types, from this.
 */
export async function openApiDocument(): Promise<Record<string, unknown>> {
  const config = { ...loadConfig({}), store: { kind: 'sqlite', path: ':memory:' } as const }
  const store = openStore(config.store)
  try {
    await prepareStore(store)
    // Metrics only observe requests (they serve on a port of their own): the document is the same.
    const services = createServices({ store, config, metrics: null })
    const app = await buildApp({ config, store, services })
    try {
      await app.ready()
      return app.swagger() as unknown as Record<string, unknown>
    } finally {
      services.evaluator.stop()
      await app.close()
    }
  } finally {
    await store.close()
  }
}
