import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

const folder = new URL('../../src/store/migrations/', import.meta.url)

// A migration must build the same database in a year as today: it may import Kysely and its
// own folder's files, never today's services, schemas, tables or repositories.
describe('migrations', () => {
  const files = readdirSync(folder).filter((name) => name.endsWith('.ts'))

  it('are one file each, numbered in order', () => {
    const numbered = files.filter((name) => /^\d{4}_/.test(name)).sort()
    expect(numbered.length).toBeGreaterThanOrEqual(5)
    expect(numbered.map((name) => name.slice(0, 4))).toEqual(
      numbered.map((_, i) => String(i + 1).padStart(4, '0')),
    )
  })

  it.each(files)('%s imports nothing of today’s code', (name) => {
    const source = readFileSync(new URL(name, folder), 'utf8')
    const imports = [...source.matchAll(/from\s+'([^']+)'/g)].map((m) => m[1])
    for (const specifier of imports)
      expect(specifier === 'kysely' || /^\.\/[^/]+\.js$/.test(specifier ?? '')).toBe(true)
  })
})
