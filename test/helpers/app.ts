import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../src/app.js'
import { type Config, loadConfig } from '../../src/config.js'
import type { Scope } from '../../src/services/credentials.js'
import { createServices, type ServiceDependencies, type Services } from '../../src/services/index.js'
import { prepareStore } from '../../src/services/store-setup.js'
import { openStore, type Store } from '../../src/store/database.js'
import { freshStoreConfig, type StoreKind } from './stores.js'

export interface TestApp {
  app: FastifyInstance
  store: Store
  services: Services
  config: Config
  /** An admin key of workspace `default`. */
  adminKey: string
  workspaceId: string
  /** Creates a key with these scopes, in `default` or in the named workspace (created on demand). */
  key(scopes: Scope[], options?: { workspace?: string; expiresAt?: number | null }): Promise<string>
  /** An authenticated JSON request with the admin key unless `key` is given. */
  request(options: InjectOptions & { key?: string | null }): Promise<LightMyRequestResponse>
  close(): Promise<void>
}

/**
 * `poolSize` bounds a PostgreSQL store's connections (one: every request uses the same); the
 * rest are services' dependencies beyond the store and the configuration (a judge, an
 * evaluation worker).
 */
export async function createTestApp(
  kind: StoreKind,
  env: Record<string, string> = {},
  options: Omit<ServiceDependencies, 'store' | 'config'> & { poolSize?: number } = {},
): Promise<TestApp> {
  const fresh = await freshStoreConfig(kind)
  const storeConfig =
    fresh.config.kind === 'postgres' && options.poolSize !== undefined
      ? { ...fresh.config, poolSize: options.poolSize }
      : fresh.config
  const config = { ...loadConfig({ ...env }), store: storeConfig }
  const store = openStore(storeConfig)
  await prepareStore(store)
  const { poolSize: _poolSize, ...dependencies } = options
  const services = createServices({ store, config, ...dependencies })
  const app = await buildApp({
    config,
    store,
    services,
    ...(process.env.TEST_LOG ? { logger: (await import('pino')).default({ level: 'error' }) } : {}),
  })
  await app.ready()

  const workspaces = new Map<string, string>()
  const workspaceId = async (name: string) => {
    const known = workspaces.get(name)
    if (known) return known
    const id =
      (await services.operator.findWorkspace(name))?.id ?? (await services.operator.createWorkspace(name)).id
    workspaces.set(name, id)
    return id
  }
  const key: TestApp['key'] = async (scopes, options = {}) => {
    const { secret } = await services.operator.createKey({
      workspaceId: await workspaceId(options.workspace ?? 'default'),
      name: 'test',
      scopes,
      expiresAt: options.expiresAt ?? null,
    })
    return secret
  }
  const adminKey = await key(['admin'])

  return {
    app,
    store,
    services,
    config,
    adminKey,
    workspaceId: await workspaceId('default'),
    key,
    request({ key: requestKey, headers, ...options }) {
      const auth = requestKey === null ? {} : { authorization: `Bearer ${requestKey ?? adminKey}` }
      return app.inject({ ...options, headers: { ...auth, ...headers } })
    },
    async close() {
      await app.close()
      await store.close()
      await fresh.drop()
    },
  }
}

/** Asserts the shape every error answer shares, and returns the parsed problem. */
export function problem(response: LightMyRequestResponse, status: number, code: string) {
  const body = response.json()
  if (response.statusCode !== status || body.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${response.statusCode}: ${response.body}`)
  }
  if (!String(response.headers['content-type']).startsWith('application/problem+json')) {
    throw new Error(`expected application/problem+json, got ${response.headers['content-type']}`)
  }
  if (body.status !== status || typeof body.title !== 'string' || typeof body.detail !== 'string') {
    throw new Error(`malformed problem: ${response.body}`)
  }
  if (body.request_id !== response.headers['x-request-id'])
    throw new Error('request_id does not match X-Request-Id')
  return body as {
    type: string
    title: string
    status: number
    detail: string
    code: string
    request_id: string
    errors?: { pointer: string; detail: string }[]
  }
}
