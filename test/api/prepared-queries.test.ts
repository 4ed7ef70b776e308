import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findPrepared } from '../../src/store/prepared-queries.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'

// Prepared queries take positional parameters: a missing or extra one must fail loudly rather
// than shift the others and read the wrong row.
describe.each(STORE_KINDS)('prepared queries (%s)', (kind) => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp(kind)
  })
  afterAll(async () => t.close())

  const build = () =>
    t.store.db.selectFrom('applications').select('id').where('workspace_id', '=', '').where('id', '=', '')

  it('run with as many parameters as the query takes', async () => {
    await expect(
      findPrepared(t.store.db, 'test two parameters', build, [t.workspaceId, 'none']),
    ).resolves.toBe(undefined)
  })

  it.each([
    [['only-one']],
    [['a', 'b', 'c']],
  ])('refuse %j, whatever the count was before', async (parameters) => {
    await expect(findPrepared(t.store.db, 'test two parameters', build, parameters)).rejects.toThrow(
      /takes 2 parameters; \d were given/,
    )
  })
})
