import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'

describe.each(STORE_KINDS)('policy lifecycle (%s)', (kind) => {
  let t: TestApp
  const base = '/v1/applications/bot/policies'
  beforeAll(async () => {
    t = await createTestApp(kind)
    await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'bot', name: 'Bot', description: '' },
    })
  })
  afterAll(async () => {
    await t.close()
  })

  const create = async (id: string, extra: Record<string, unknown> = {}) => {
    const res = await t.request({
      method: 'POST',
      url: base,
      payload: { id, rules: [{ type: 'relevance' }], target: ['output'], ...extra },
    })
    expect(res.statusCode, res.body).toBe(201)
    return res
  }
  const patch = (id: string, payload: unknown, headers: Record<string, string> = {}) =>
    t.request({ method: 'PATCH', url: `${base}/${id}`, payload: payload as object, headers })

  it('reads a policy back exactly, with its ETag', async () => {
    const created = await create('read', { definition: 'd', override_response: 'o' })
    const res = await t.request({ method: 'GET', url: `${base}/read` })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual(created.json())
    expect(res.headers.etag).toBe(created.headers.etag)
  })

  it('keeps mode and on_error: defaults shown, set on create, changed and reset by a patch, kept in history', async () => {
    const created = await create('modes')
    expect(created.json()).toMatchObject({ mode: 'enforce', on_error: 'fail_closed' })
    const monitored = await create('modes-set', { mode: 'monitor', on_error: 'fail_open' })
    expect(monitored.json()).toMatchObject({ mode: 'monitor', on_error: 'fail_open' })
    const changed = await patch('modes', { mode: 'monitor' })
    expect(changed.json()).toMatchObject({ mode: 'monitor', on_error: 'fail_closed', revision: 2 })
    const reset = await patch('modes', { mode: null, on_error: 'fail_open' })
    expect(reset.json()).toMatchObject({ mode: 'enforce', on_error: 'fail_open', revision: 3 })
    // The same values again change nothing: no new revision.
    expect((await patch('modes', { mode: 'enforce' })).json().revision).toBe(3)
    const second = await t.request({ method: 'GET', url: `${base}/modes/revisions/2` })
    expect(second.json()).toMatchObject({ mode: 'monitor', on_error: 'fail_closed', revision: 2 })
    expect(problem(await patch('modes', { mode: 'audit' }), 422, 'validation_error').errors).toEqual([
      { pointer: '/mode', detail: expect.stringContaining('enforce') },
    ])
    const bad = await t.request({
      method: 'POST',
      url: base,
      payload: { id: 'modes-bad', rules: [{ type: 'relevance' }], target: ['output'], on_error: 'open' },
    })
    expect(problem(bad, 422, 'validation_error').errors).toEqual([
      { pointer: '/on_error', detail: expect.stringContaining('fail_closed') },
    ])
  })

  it('says which is missing: the application or the policy', async () => {
    expect(
      problem(await t.request({ method: 'GET', url: `${base}/none` }), 404, 'not_found').detail,
    ).toContain('policy')
    expect(
      problem(
        await t.request({ method: 'GET', url: '/v1/applications/none/policies/read' }),
        404,
        'not_found',
      ).detail,
    ).toContain('application')
  })

  it('lists policies in creation order with pagination, and 404 for an unknown application', async () => {
    await t.request({
      method: 'POST',
      url: '/v1/applications',
      payload: { id: 'lister', name: 'L', description: '' },
    })
    for (let i = 0; i < 5; i++) {
      await t.request({
        method: 'POST',
        url: '/v1/applications/lister/policies',
        payload: { id: `p${i}`, rules: [{ type: 'relevance' }], target: ['output'] },
      })
    }
    const first = (await t.request({ method: 'GET', url: '/v1/applications/lister/policies?limit=3' })).json()
    expect(first.data.map((p: { id: string }) => p.id)).toEqual(['p0', 'p1', 'p2'])
    const second = (
      await t.request({
        method: 'GET',
        url: `/v1/applications/lister/policies?limit=3&cursor=${first.next_cursor}`,
      })
    ).json()
    expect(second.data.map((p: { id: string }) => p.id)).toEqual(['p3', 'p4'])
    expect(second.next_cursor).toBeNull()
    problem(await t.request({ method: 'GET', url: '/v1/applications/ghost/policies' }), 404, 'not_found')
    const other = await t.key(['admin'], { workspace: 'list-other' })
    problem(
      await t.request({ method: 'GET', url: '/v1/applications/lister/policies', key: other }),
      404,
      'not_found',
    )
  })

  it('stores a revision for every change and lists them newest first', async () => {
    const created = await create('history', { definition: 'first' })
    const v2 = await patch('history', { rules: [{ type: 'pii', flagged: ['email'] }] })
    expect(v2.statusCode).toBe(200)
    expect(v2.json().revision).toBe(2)
    expect(v2.json().created).toBe(created.json().created)
    const v3 = await patch('history', { definition: null, target: ['input', 'output'] })
    expect(v3.json()).toMatchObject({ revision: 3, definition: null, target: ['input', 'output'] })
    expect(v3.json().rules).toEqual([
      { type: 'pii', expected: 'pass', value: null, threshold: null, flagged: ['email'] },
    ])

    const list = (await t.request({ method: 'GET', url: `${base}/history/revisions` })).json()
    expect(list.data.map((p: { revision: number }) => p.revision)).toEqual([3, 2, 1])
    expect(list.data[0]).toEqual(v3.json())
    expect(list.data[2]).toEqual(created.json())
    expect(list.next_cursor).toBeNull()

    const page = (await t.request({ method: 'GET', url: `${base}/history/revisions?limit=2` })).json()
    expect(page.data.map((p: { revision: number }) => p.revision)).toEqual([3, 2])
    const rest = (
      await t.request({ method: 'GET', url: `${base}/history/revisions?limit=2&cursor=${page.next_cursor}` })
    ).json()
    expect(rest.data.map((p: { revision: number }) => p.revision)).toEqual([1])

    const one = await t.request({ method: 'GET', url: `${base}/history/revisions/2` })
    expect(one.statusCode).toBe(200)
    expect(one.json()).toEqual(v2.json())
    problem(await t.request({ method: 'GET', url: `${base}/history/revisions/4` }), 404, 'not_found')
    const zero = problem(
      await t.request({ method: 'GET', url: `${base}/history/revisions/0` }),
      422,
      'validation_error',
    )
    expect(zero.errors?.[0]?.pointer).toBe('#/path/revision')
  })

  it('does not create a revision for a patch that changes nothing', async () => {
    const created = await create('steady')
    const res = await patch('steady', { target: ['output'], revision: 99 })
    expect(res.json().revision).toBe(1)
    expect(res.headers.etag).toBe(created.headers.etag)
  })

  it('validates the result of a patch like a create', async () => {
    await create('custom', { rules: [{ type: 'custom' }], definition: 'Stay on topic.' })
    const body = problem(await patch('custom', { definition: null }), 422, 'validation_error')
    expect(body.errors).toEqual([
      { pointer: '/definition', detail: 'is required by the custom rule at /rules/0' },
    ])
    const regex = problem(
      await patch('custom', { rules: [{ type: 'regex', value: '(?=x)' }] }),
      422,
      'validation_error',
    )
    expect(regex.errors?.[0]?.pointer).toBe('/rules/0/value')
    expect((await t.request({ method: 'GET', url: `${base}/custom` })).json().revision).toBe(1)
  })

  it.each([
    ['rules set to null', { rules: null }, '/rules', 'must be an array'],
    ['rules emptied', { rules: [] }, '/rules', 'must not be empty'],
    ['target set to null', { target: null }, '/target', 'must be an array'],
    ['target emptied', { target: [] }, '/target', 'must not be empty'],
    [
      'a misspelt rule field',
      { rules: [{ type: 'toxicity', treshold: 0.2 }] },
      '/rules/0/treshold',
      'is not a known field',
    ],
    [
      'a different id',
      { id: 'renamed' },
      '/id',
      'cannot be changed: it must equal the id in the path ("strict")',
    ],
  ])('answers 422 for %s', async (_name, payload, pointer, detail) => {
    await t.request({
      method: 'POST',
      url: base,
      payload: { id: 'strict', rules: [{ type: 'relevance' }], target: ['output'] },
    })
    expect(problem(await patch('strict', payload), 422, 'validation_error').errors).toEqual([
      { pointer, detail },
    ])
  })

  it('lets exactly one of two racing PATCHes with the same If-Match win, with one revision each', async () => {
    for (let round = 0; round < 5; round++) {
      const created = await create(`race-${round}`)
      const etag = created.headers.etag as string
      const answers = await Promise.all([
        patch(`race-${round}`, { target: ['input'] }, { 'if-match': etag }),
        patch(`race-${round}`, { target: ['system'] }, { 'if-match': etag }),
      ])
      expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 412])
      const revisions = (await t.request({ method: 'GET', url: `${base}/race-${round}/revisions` })).json()
      expect(revisions.data.map((p: { revision: number }) => p.revision)).toEqual([2, 1])
    }
  })

  it('numbers revisions without gaps under concurrent unconditional PATCHes', async () => {
    await create('busy')
    // Every value differs from the current ['output'], so each patch is a real change.
    const targets = ['input', 'user', 'assistant', 'system', 'context'] as const
    const answers = await Promise.all(targets.map((target) => patch('busy', { target: [target] })))
    expect(answers.every((a) => a.statusCode === 200)).toBe(true)
    const revisions = (await t.request({ method: 'GET', url: `${base}/busy/revisions` })).json()
    expect(revisions.data.map((p: { revision: number }) => p.revision)).toEqual([6, 5, 4, 3, 2, 1])
  })

  it('deletes a policy with its history; If-Match is honoured', async () => {
    const created = await create('gone')
    await patch('gone', { target: ['input'] })
    problem(
      await t.request({
        method: 'DELETE',
        url: `${base}/gone`,
        headers: { 'if-match': created.headers.etag as string },
      }),
      412,
      'precondition_failed',
    )
    expect((await t.request({ method: 'DELETE', url: `${base}/gone` })).statusCode).toBe(204)
    problem(await t.request({ method: 'GET', url: `${base}/gone` }), 404, 'not_found')
    problem(await t.request({ method: 'GET', url: `${base}/gone/revisions` }), 404, 'not_found')
    const rows = await t.store.db
      .selectFrom('policy_revisions')
      .select('revision')
      .where('policy_id', '=', 'gone')
      .execute()
    expect(rows).toEqual([])
    // Recreated, it starts again at revision 1 with a fresh history.
    expect((await create('gone')).json().revision).toBe(1)
  })

  it('keeps another workspace out of every policy route', async () => {
    const other = await t.key(['admin'], { workspace: 'intruders' })
    const routes = [
      { method: 'GET', url: `${base}/read` },
      { method: 'PATCH', url: `${base}/read`, payload: { target: ['input'] } },
      { method: 'DELETE', url: `${base}/read` },
      { method: 'GET', url: `${base}/read/revisions` },
      { method: 'GET', url: `${base}/read/revisions/1` },
    ] as const
    for (const route of routes) {
      problem(await t.request({ ...route, key: other }), 404, 'not_found')
    }
    expect((await t.request({ method: 'GET', url: `${base}/read` })).json().revision).toBe(1)
  })
})
