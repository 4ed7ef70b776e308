import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

// semver ships no types of its own; these are the two functions this test calls.
const semver = createRequire(import.meta.url)('semver') as {
  validRange(range: string): string | null
  subset(sub: string, dom: string, options?: { includePrerelease?: boolean }): boolean
}

/**
 * The Node releases the README promises `npm install` works on: Node 20 from 20.19 (`npm install`
 * builds the console, and Vite needs 20.19), and every later 20.
 */
const SUPPORTED_NODE_20 = '>=20.19.0 <21.0.0-0'

interface LockedPackage {
  version?: string
  engines?: { node?: string } | string[]
}

const lockfile = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, LockedPackage>
}

describe('package-lock.json', () => {
  it('holds no package whose engines.node excludes a supported Node 20, so npm install warns of none', () => {
    const excluding: string[] = []
    for (const [path, pkg] of Object.entries(lockfile.packages)) {
      const range = Array.isArray(pkg.engines) ? undefined : pkg.engines?.node
      if (range === undefined) continue
      // npm checks engines with prereleases included; an invalid range fails its check too.
      const admits =
        semver.validRange(range) !== null &&
        semver.subset(SUPPORTED_NODE_20, range, { includePrerelease: true })
      if (!admits) excluding.push(`${path || '(warden)'}@${pkg.version}: node ${range}`)
    }
    expect(excluding).toEqual([])
  })

  it('the check tells apart the ranges it exists for', () => {
    const admits = (range: string) => semver.subset(SUPPORTED_NODE_20, range, { includePrerelease: true })
    expect(admits('>=22')).toBe(false)
    expect(admits('^20.17.0 || >=22.9.0')).toBe(true)
    expect(admits('^20.19.0 || >=22.12.0')).toBe(true)
    expect(admits('>=20.20')).toBe(false)
    expect(admits('18 || 20 || >=22')).toBe(true)
  })
})
