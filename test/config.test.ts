import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../src/config.js'

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: 'sqlite:./data/warden.db',
      store: { kind: 'sqlite', path: './data/warden.db' },
      logLevel: 'info',
      adminKey: null,
      rateLimitPerMinute: 6000,
      bodyLimit: 1_048_576,
    })
    expect(Object.isFrozen(config)).toBe(true)
  })

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@db:5432/warden',
      LOG_LEVEL: 'debug',
      WARDEN_ADMIN_KEY: 'a-very-long-operator-secret-123',
      RATE_LIMIT_PER_MINUTE: '0',
      DATABASE_POOL_SIZE: '20',
    })
    expect(config).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      store: { kind: 'postgres', url: 'postgres://u@db:5432/warden', poolSize: 20, statementTimeoutMs: 5000 },
      logLevel: 'debug',
      adminKey: 'a-very-long-operator-secret-123',
      rateLimitPerMinute: 0,
    })
  })

  it('accepts sqlite:///absolute paths', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite:///var/lib/warden.db' }).store).toEqual({
      kind: 'sqlite',
      path: '/var/lib/warden.db',
    })
  })

  it.each([
    [{ PORT: 'eighty' }, 'PORT must be a whole number'],
    [{ PORT: '70000' }, 'PORT must be between 0 and 65535'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must start with sqlite: or postgres://'],
    [{ DATABASE_URL: 'sqlite:' }, 'DATABASE_URL names no SQLite file'],
    [{ WARDEN_ADMIN_KEY: 'short' }, 'WARDEN_ADMIN_KEY must be 24 to 256'],
    [{ WARDEN_ADMIN_KEY: 'has a space in it and is long enough' }, 'WARDEN_ADMIN_KEY must be 24 to 256'],
    [{ RATE_LIMIT_PER_MINUTE: '-1' }, 'RATE_LIMIT_PER_MINUTE must be a whole number'],
  ])('rejects %j with one clear line', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError)
    expect(() => loadConfig(env)).toThrow(message)
  })
})
