import { describe, expect, it } from 'vitest'
import { defineInsert, defineStatement, parametersOf, statementName } from '../../src/store/statements.js'

// The fast path's statements are compiled once per dialect and run by their text: each value
// must land in the place its parameter takes in the compiled text, whatever order the call names
// them in, or a point read would silently read the wrong row.
describe('statements', () => {
  const byAppAndSeq = defineStatement('testStatement', (db, p: { appSeq: number; id: string }) =>
    db.selectFrom('evaluations').select('doc').where('id', '=', p.id).where('app_seq', '=', p.appSeq),
  )

  it('pass each value where its parameter is in the compiled text, on both dialects', () => {
    expect(byAppAndSeq.text.sqlite).toBe(
      '/* testStatement */ select "doc" from "evaluations" where "id" = ? and "app_seq" = ?',
    )
    expect(byAppAndSeq.text.postgres).toBe(
      '/* testStatement */ select "doc" from "evaluations" where "id" = $1 and "app_seq" = $2',
    )
    for (const dialect of ['sqlite', 'postgres'] as const)
      expect(parametersOf(byAppAndSeq, dialect, { appSeq: 7, id: 'ev-1' })).toEqual(['ev-1', 7])
  })

  it('bind a parameter used twice at both places', () => {
    const twice = defineStatement('testTwice', (db, p: { id: string }) =>
      db.selectFrom('applications').select('seq').where('id', '=', p.id).where('workspace_id', '=', p.id),
    )
    expect(parametersOf(twice, 'postgres', { id: 'x' })).toEqual(['x', 'x'])
  })

  it('refuse, when defined, a query that binds a value that is not a parameter', () => {
    expect(() =>
      defineStatement('testConstant', (db, p: { id: string }) =>
        db.selectFrom('applications').select('seq').where('id', '=', p.id).where('workspace_id', '=', 'ws'),
      ),
    ).toThrow('statement testConstant binds "ws", which is not one of its parameters')
  })

  it('insert NULL for a column the row leaves out', () => {
    const insert = defineInsert<{ workspace_id: string; id: string; provider?: string | null }>(
      'testInsert',
      'applications',
      ['workspace_id', 'id', 'provider'],
    )
    expect(insert.text.sqlite).toBe(
      '/* testInsert */ insert into "applications" ("workspace_id", "id", "provider") values (?, ?, ?)',
    )
    expect(parametersOf(insert, 'sqlite', { workspace_id: 'ws', id: 'a' })).toEqual(['ws', 'a', null])
  })

  it('carry their name in their text, and nothing else does', () => {
    expect(statementName(byAppAndSeq.text.postgres)).toBe('testStatement')
    expect(statementName('select 1')).toBeUndefined()
    expect(statementName('/* a comment */ select 1')).toBeUndefined()
    expect(statementName('/* x */')).toBeUndefined()
    expect(() => defineStatement('bad */ name', (db) => db.selectFrom('applications').select('seq'))).toThrow(
      /must match/,
    )
  })
})
