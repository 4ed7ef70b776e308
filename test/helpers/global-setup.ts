/** Says once per run which stores the suite covers, and how to add PostgreSQL. */
export default function setup(): void {
  if (!process.env.TEST_DATABASE_URL) {
    process.stdout.write(
      '\n[warden] PostgreSQL store tests are skipped: set TEST_DATABASE_URL=postgres://user@host:5432/db to run every store test on PostgreSQL too.\n\n',
    )
  }
}
