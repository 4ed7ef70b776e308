import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { StoreConfig } from '../../src/config.js'

export type StoreKind = 'sqlite' | 'postgres'

/** Every store test runs on SQLite, and on PostgreSQL when TEST_DATABASE_URL is set. */
export const STORE_KINDS: StoreKind[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite']

export interface TestStoreConfig {
  config: StoreConfig
  /** DATABASE_URL (and extra env) for a server process using the same store. */
  env: Record<string, string>
  drop(): Promise<void>
}

/** A fresh, empty store: a new SQLite file, or a new schema in the test PostgreSQL database. */
export async function freshStoreConfig(kind: StoreKind): Promise<TestStoreConfig> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'warden-test-'))
    const path = join(dir, 'warden.db')
    return {
      config: { kind: 'sqlite', path },
      env: { DATABASE_URL: `sqlite:${path}` },
      async drop() {
        rmSync(dir, { recursive: true, force: true })
      },
    }
  }
  const url = process.env.TEST_DATABASE_URL
  if (!url) throw new Error('TEST_DATABASE_URL is not set')
  const schema = `warden_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  await admin.end()
  const withSchema = new URL(url)
  withSchema.searchParams.set('options', `-c search_path=${schema}`)
  return {
    config: { kind: 'postgres', url, poolSize: 5, statementTimeoutMs: 5000, schema },
    env: { DATABASE_URL: withSchema.toString() },
    async drop() {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      await client.query(`drop schema if exists ${schema} cascade`)
      await client.end()
    },
  }
}
