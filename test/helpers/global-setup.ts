import pg from 'pg'

/**
 * Says once per run which stores the suite covers. Where PostgreSQL is required
 * (WARDEN_REQUIRE_POSTGRES=1, as CI sets it), a missing or unreachable database fails the run
 * instead of silently skipping half the suite.
 */
export default async function setup(): Promise<void> {
  const url = process.env.TEST_DATABASE_URL
  const required = process.env.WARDEN_REQUIRE_POSTGRES === '1'
  if (!url) {
    if (required) throw new Error('WARDEN_REQUIRE_POSTGRES=1 but TEST_DATABASE_URL is not set')
    process.stdout.write(
      '\n[warden] PostgreSQL store tests are skipped: set TEST_DATABASE_URL=postgres://user@host:5432/db to run every store test on PostgreSQL too.\n\n',
    )
    return
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
  try {
    await client.connect()
    await client.query('select 1')
  } catch (error) {
    throw new Error(`TEST_DATABASE_URL is set but PostgreSQL is unreachable: ${(error as Error).message}`)
  } finally {
    await client.end().catch(() => {})
  }
  process.stdout.write('\n[warden] store tests run on SQLite and on PostgreSQL.\n\n')
}
