import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'

describe.each(STORE_KINDS)('application lifecycle (%s)', (kind) => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp(kind)
  })
  afterAll(async () => {
    await t.close()
  })

  const create = async (payload: Record<string, unknown>, key?: string) => {
    const res = await t.request({ method: 'POST', url: '/v1/applications', payload, key })
    expect(res.statusCode, res.body).toBe(201)
    return res
  }
  const patch = (id: string, payload: unknown, headers: Record<string, string> = {}) =>
    t.request({ method: 'PATCH', url: `/v1/applications/${id}`, payload: payload as object, headers })

  describe('GET /v1/applications/{id}', () => {
    it('returns what the create returned, with the same ETag', async () => {
      const created = await create({
        id: 'read-me',
        name: 'Read',
        description: 'd',
        parameters: { top_k: 5 },
      })
      const res = await t.request({ method: 'GET', url: '/v1/applications/read-me' })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual(created.json())
      expect(res.headers.etag).toBe(created.headers.etag)
      expect(res.headers['cache-control']).toBe('no-store')
    })

    it('answers 404 for a missing id and for another workspace, alike', async () => {
      const other = await t.key(['admin'], { workspace: 'elsewhere' })
      problem(
        await t.request({ method: 'GET', url: '/v1/applications/read-me', key: other }),
        404,
        'not_found',
      )
      problem(await t.request({ method: 'GET', url: '/v1/applications/nope' }), 404, 'not_found')
    })

    it('answers 422 for an id that cannot exist', async () => {
      const body = problem(
        await t.request({ method: 'GET', url: '/v1/applications/..%2F' }),
        422,
        'validation_error',
      )
      expect(body.errors?.[0]?.pointer).toBe('#/path/application_id')
    })
  })

  describe('GET /v1/applications', () => {
    let key: string
    beforeAll(async () => {
      key = await t.key(['admin'], { workspace: 'listing' })
      for (let i = 0; i < 7; i++) await create({ id: `app-${i}`, name: `App ${i}`, description: '' }, key)
    })
    const list = (query: string) => t.request({ method: 'GET', url: `/v1/applications${query}`, key })

    it('lists in creation order, 50 by default, with next_cursor null on the last page', async () => {
      const res = await list('')
      expect(res.statusCode).toBe(200)
      const body = res.json()
      expect(body.data.map((a: { id: string }) => a.id)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `app-${i}`))
      expect(body.next_cursor).toBeNull()
      expect(Object.keys(body.data[0]).sort()).toEqual(
        ['created', 'description', 'id', 'model', 'name', 'parameters', 'provider', 'updated'].sort(),
      )
    })

    it('answers 50 records by default, and the rest on the next page', async () => {
      const many = await t.key(['admin'], { workspace: 'fifty' })
      for (let i = 0; i < 53; i++) await create({ id: `m-${i}`, name: 'M', description: '' }, many)
      const first = (await t.request({ method: 'GET', url: '/v1/applications', key: many })).json()
      expect(first.data).toHaveLength(50)
      expect(first.next_cursor).toEqual(expect.any(String))
      const rest = (
        await t.request({ method: 'GET', url: `/v1/applications?cursor=${first.next_cursor}`, key: many })
      ).json()
      expect(rest.data.map((a: { id: string }) => a.id)).toEqual(['m-50', 'm-51', 'm-52'])
      expect(rest.next_cursor).toBeNull()
    })

    it('pages with limit and an opaque cursor', async () => {
      const seen: string[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const res = await list(`?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
        expect(res.statusCode).toBe(200)
        const body = res.json()
        seen.push(...body.data.map((a: { id: string }) => a.id))
        cursor = body.next_cursor
        pages++
      } while (cursor)
      expect(pages).toBe(3)
      expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `app-${i}`))
    })

    it('ends with next_cursor null when the last page is exactly full', async () => {
      const full = (await list('?limit=7')).json()
      expect(full.data).toHaveLength(7)
      expect(full.next_cursor).toBeNull()
      const first = (await list('?limit=6')).json()
      expect(first.data.map((a: { id: string }) => a.id)).toEqual([0, 1, 2, 3, 4, 5].map((i) => `app-${i}`))
      const last = (await list(`?limit=6&cursor=${encodeURIComponent(first.next_cursor)}`)).json()
      expect(last).toMatchObject({ data: [{ id: 'app-6' }], next_cursor: null })
      const single = (await list('?limit=1')).json()
      expect(single.data.map((a: { id: string }) => a.id)).toEqual(['app-0'])
      const second = (await list(`?limit=1&cursor=${encodeURIComponent(single.next_cursor)}`)).json()
      expect(second.data.map((a: { id: string }) => a.id)).toEqual(['app-1'])
    })

    it('shows only the caller workspace', async () => {
      const res = await t.request({ method: 'GET', url: '/v1/applications?limit=200' })
      expect(res.json().data.some((a: { id: string }) => a.id.startsWith('app-'))).toBe(false)
    })

    it.each([
      ['?limit=0', '#/query/limit', 'must be at least 1'],
      ['?limit=201', '#/query/limit', 'must be at most 200'],
      ['?limit=ten', '#/query/limit', 'must be an integer'],
      [
        '?cursor=garbage',
        '#/query/cursor',
        'is not a cursor this API issued; pass next_cursor from the previous page',
      ],
      ['?sort=name', '#/query/sort', 'is not a known field'],
    ])('answers 422 for %s', async (query, pointer, detail) => {
      const body = problem(await list(query), 422, 'validation_error')
      expect(body.errors).toEqual([{ pointer, detail }])
    })

    it('never skips or repeats a record while others are created during the walk', async () => {
      const walker = await t.key(['admin'], { workspace: 'walk' })
      const initial = Array.from({ length: 40 }, (_, i) => `w-${String(i).padStart(2, '0')}`)
      for (const id of initial) await create({ id, name: id, description: '' }, walker)
      const seen: string[] = []
      let cursor: string | null = null
      let extra = 0
      do {
        const query: string = `?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
        // Each page is read while new records are being created concurrently.
        const [res] = await Promise.all([
          t.request({ method: 'GET', url: `/v1/applications${query}`, key: walker }),
          ...Array.from({ length: 3 }, () =>
            create({ id: `new-${extra++}`, name: 'n', description: '' }, walker),
          ),
        ])
        const body = res.json()
        seen.push(...body.data.map((a: { id: string }) => a.id))
        cursor = body.next_cursor
      } while (cursor)
      expect(new Set(seen).size).toBe(seen.length)
      expect(seen.filter((id) => id.startsWith('w-'))).toEqual(initial)
    })

    it('never skips or repeats a remaining record while others are deleted during the walk', async () => {
      const walker = await t.key(['admin'], { workspace: 'walk-delete' })
      const ids = Array.from({ length: 30 }, (_, i) => `d-${String(i).padStart(2, '0')}`)
      for (const id of ids) await create({ id, name: id, description: '' }, walker)
      const doomed = new Set(ids.filter((_, i) => i % 3 === 0))
      const seen: string[] = []
      let cursor: string | null = null
      const deletions = [...doomed]
      do {
        const query: string = `?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
        const victim = deletions.pop()
        const [res] = await Promise.all([
          t.request({ method: 'GET', url: `/v1/applications${query}`, key: walker }),
          victim ? t.request({ method: 'DELETE', url: `/v1/applications/${victim}`, key: walker }) : null,
        ])
        const body = res.json()
        seen.push(...body.data.map((a: { id: string }) => a.id))
        cursor = body.next_cursor
      } while (cursor)
      expect(new Set(seen).size).toBe(seen.length)
      const survivors = ids.filter((id) => !doomed.has(id))
      expect(seen.filter((id) => !doomed.has(id))).toEqual(survivors)
    })
  })

  describe('PATCH /v1/applications/{id}', () => {
    it('merges fields and nested parameters, clears with null, and bumps updated and ETag', async () => {
      const created = await create({
        id: 'patch-me',
        name: 'Before',
        description: 'desc',
        provider: 'openai',
        model: 'gpt-4o',
        parameters: { temperature: 0.5, max_tokens: 100 },
      })
      const res = await patch('patch-me', {
        name: 'After',
        model: null,
        parameters: { temperature: null, top_p: 0.9 },
      })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({
        ...created.json(),
        name: 'After',
        model: null,
        parameters: { system_prompt: null, temperature: null, max_tokens: 100, top_p: 0.9, top_k: null },
        updated: res.json().updated,
      })
      expect(res.json().updated).toBeGreaterThanOrEqual(created.json().updated)
      expect(res.headers.etag).not.toBe(created.headers.etag)
      expect((await t.request({ method: 'GET', url: '/v1/applications/patch-me' })).json()).toEqual(
        res.json(),
      )
    })

    it('clears all parameters with null, and shows null once every parameter is cleared', async () => {
      await create({ id: 'params', name: 'P', description: '', parameters: { top_k: 3 } })
      expect((await patch('params', { parameters: { top_k: null } })).json().parameters).toBeNull()
      expect((await patch('params', { parameters: { top_k: 4 } })).json().parameters.top_k).toBe(4)
      expect((await patch('params', { parameters: null })).json().parameters).toBeNull()
    })

    it('accepts application/merge-patch+json', async () => {
      await create({ id: 'merge-type', name: 'M', description: '' })
      const res = await t.request({
        method: 'PATCH',
        url: '/v1/applications/merge-type',
        body: JSON.stringify({ description: 'via merge patch' }),
        headers: { 'content-type': 'application/merge-patch+json' },
      })
      expect(res.statusCode).toBe(200)
      expect(res.json().description).toBe('via merge patch')
    })

    it('returns the resource unchanged for an empty patch', async () => {
      const created = await create({ id: 'noop', name: 'N', description: '' })
      const res = await patch('noop', {})
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual(created.json())
      expect(res.headers.etag).toBe(created.headers.etag)
    })

    it.each([
      ['name set to null', { name: null }, [{ pointer: '/name', detail: 'must be a string' }]],
      [
        'description set to null',
        { description: null },
        [{ pointer: '/description', detail: 'must be a string' }],
      ],
      ['a blank name', { name: '  ' }, [{ pointer: '/name', detail: 'must not be blank' }]],
      [
        'temperature out of range',
        { parameters: { temperature: 3 } },
        [{ pointer: '/parameters/temperature', detail: 'must be at most 2' }],
      ],
      ['an unknown field', { colour: 'blue' }, [{ pointer: '/colour', detail: 'is not a known field' }]],
      [
        'an unknown parameter',
        { parameters: { seed: 1 } },
        [{ pointer: '/parameters/seed', detail: 'is not a known field' }],
      ],
      [
        'a different id',
        { id: 'other' },
        [{ pointer: '/id', detail: 'cannot be changed: it must equal the id in the path ("strict")' }],
      ],
    ])('answers 422 for %s', async (_name, payload, errors) => {
      await t.request({
        method: 'POST',
        url: '/v1/applications',
        payload: { id: 'strict', name: 'S', description: '' },
      })
      expect(problem(await patch('strict', payload), 422, 'validation_error').errors).toEqual(errors)
    })

    it('accepts the same id and the read-only fields a client read', async () => {
      const created = await create({ id: 'echo', name: 'E', description: '' })
      const res = await patch('echo', { ...(created.json() as object), name: 'E2' })
      expect(res.statusCode).toBe(200)
      expect(res.json().created).toBe(created.json().created)
      expect(res.json().name).toBe('E2')
    })

    it('answers 404 for a missing application and one of another workspace', async () => {
      problem(await patch('ghost', { name: 'x' }), 404, 'not_found')
      const other = await t.key(['admin'], { workspace: 'patch-other' })
      const res = await t.request({
        method: 'PATCH',
        url: '/v1/applications/echo',
        payload: { name: 'x' },
        key: other,
      })
      problem(res, 404, 'not_found')
    })

    it('honours If-Match: the current ETag applies, a stale one is 412, * matches', async () => {
      const created = await create({ id: 'cas', name: 'v1', description: '' })
      const first = await patch('cas', { name: 'v2' }, { 'if-match': created.headers.etag as string })
      expect(first.statusCode).toBe(200)
      problem(
        await patch('cas', { name: 'v3' }, { 'if-match': created.headers.etag as string }),
        412,
        'precondition_failed',
      )
      problem(
        await patch('cas', { name: 'v3' }, { 'if-match': `W/${first.headers.etag}` }),
        412,
        'precondition_failed',
      )
      expect(
        (await patch('cas', { name: 'v3' }, { 'if-match': `"nope", ${first.headers.etag}` })).statusCode,
      ).toBe(200)
      expect((await patch('cas', { name: 'v4' }, { 'if-match': '*' })).statusCode).toBe(200)
    })

    it('lets exactly one of two racing PATCHes with the same If-Match win', async () => {
      for (let round = 0; round < 5; round++) {
        const created = await create({ id: `race-${round}`, name: 'r', description: '' })
        const etag = created.headers.etag as string
        const answers = await Promise.all([
          patch(`race-${round}`, { name: 'left' }, { 'if-match': etag }),
          patch(`race-${round}`, { name: 'right' }, { 'if-match': etag }),
        ])
        expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 412])
        const winner = answers.find((a) => a.statusCode === 200)?.json().name
        expect((await t.request({ method: 'GET', url: `/v1/applications/race-${round}` })).json().name).toBe(
          winner,
        )
      }
    })

    it('applies every one of many concurrent unconditional PATCHes to different fields', async () => {
      await create({ id: 'many', name: 'm', description: '' })
      const values = [0.1, 0.2, 0.3, 0.4]
      const answers = await Promise.all([
        patch('many', { description: 'd' }),
        patch('many', { provider: 'p' }),
        patch('many', { model: 'm' }),
        ...values.map((v, i) =>
          patch('many', {
            parameters: { [['temperature', 'top_p', 'max_tokens', 'top_k'][i] as string]: i < 2 ? v : i + 1 },
          }),
        ),
      ])
      expect(answers.every((a) => a.statusCode === 200)).toBe(true)
      const final = (await t.request({ method: 'GET', url: '/v1/applications/many' })).json()
      expect(final).toMatchObject({ description: 'd', provider: 'p', model: 'm' })
      expect(final.parameters).toEqual({
        system_prompt: null,
        temperature: 0.1,
        top_p: 0.2,
        max_tokens: 3,
        top_k: 4,
      })
    })
  })

  describe('DELETE /v1/applications/{id}', () => {
    it('deletes the application with its policies and their history', async () => {
      await create({ id: 'doomed', name: 'D', description: '' })
      const policy = await t.request({
        method: 'POST',
        url: '/v1/applications/doomed/policies',
        payload: { id: 'p', rules: [{ type: 'relevance' }], target: ['output'] },
      })
      expect(policy.statusCode).toBe(201)
      await t.request({
        method: 'PATCH',
        url: '/v1/applications/doomed/policies/p',
        payload: { target: ['input'] },
      })
      const res = await t.request({ method: 'DELETE', url: '/v1/applications/doomed' })
      expect(res.statusCode).toBe(204)
      expect(res.body).toBe('')
      problem(await t.request({ method: 'GET', url: '/v1/applications/doomed' }), 404, 'not_found')
      const left = await t.store.db
        .selectFrom('policy_revisions')
        .select('revision')
        .where('workspace_id', '=', t.workspaceId)
        .where('application_id', '=', 'doomed')
        .execute()
      expect(left).toEqual([])
      const policies = await t.store.db
        .selectFrom('policies')
        .select('id')
        .where('application_id', '=', 'doomed')
        .execute()
      expect(policies).toEqual([])
      // The id is free again.
      await create({ id: 'doomed', name: 'D again', description: '' })
      expect(
        (await t.request({ method: 'GET', url: '/v1/applications/doomed/policies' })).json().data,
      ).toEqual([])
    })

    it('honours If-Match, answers 404 when gone, and keeps other workspaces out', async () => {
      const created = await create({ id: 'careful', name: 'C', description: '' })
      await patch('careful', { name: 'C2' })
      problem(
        await t.request({
          method: 'DELETE',
          url: '/v1/applications/careful',
          headers: { 'if-match': created.headers.etag as string },
        }),
        412,
        'precondition_failed',
      )
      const other = await t.key(['admin'], { workspace: 'delete-other' })
      problem(
        await t.request({ method: 'DELETE', url: '/v1/applications/careful', key: other }),
        404,
        'not_found',
      )
      expect((await t.request({ method: 'DELETE', url: '/v1/applications/careful' })).statusCode).toBe(204)
      problem(await t.request({ method: 'DELETE', url: '/v1/applications/careful' }), 404, 'not_found')
    })
  })
})
