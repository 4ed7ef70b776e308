import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { CLIENT_DIR, clientFiles } from '../../scripts/generate-client.mjs'
import { openApiDocument } from '../../src/openapi-document.js'
import { createTestApp, type TestApp } from '../helpers/app.js'

const run = promisify(execFile)
const read = (path: string) => readFileSync(new URL(path, CLIENT_DIR), 'utf8')
const TSC = new URL('../../node_modules/typescript/bin/tsc', import.meta.url).pathname

/** What the example says it prints: each comment line that directly follows a line of code. */
function printed(source: string): string[] {
  const lines = source.split('\n')
  return lines.flatMap((line, i) => {
    const before = lines[i - 1]?.trim() ?? ''
    return line.startsWith('// ') && before !== '' && !before.startsWith('//') ? [line.slice(3)] : []
  })
}

describe('the TypeScript client (clients/typescript)', () => {
  let t: TestApp | undefined
  afterAll(async () => {
    await t?.close()
  })

  it('is generated from the API as it is now (the build writes it: npm run build)', async () => {
    const files = await clientFiles(await openApiDocument())
    expect(Object.keys(files).sort()).toEqual(['openapi.json', 'src/schema.ts'])
    for (const [path, text] of Object.entries(files)) {
      // Compared as a boolean: a difference in 300 KB of text is not worth printing.
      expect(read(path) === text, `clients/typescript/${path} is stale: run npm run build`).toBe(true)
    }
  })

  it('is generated from the document a server serves at /openapi.json', async () => {
    t ??= await createTestApp('sqlite')
    const served = await t.request({ method: 'GET', url: '/openapi.json', key: null })
    expect(served.json()).toEqual(JSON.parse(read('openapi.json')))
  })

  it('has its README example verbatim from examples/quickstart.ts', () => {
    expect(read('README.md')).toContain(`\`\`\`ts\n${read('examples/quickstart.ts')}\`\`\`\n`)
  })

  it('builds with tsc, and its README example prints what it says against a listening server', async () => {
    // The package, its example included, compiled by its own tsconfig into clients/typescript/dist.
    await run(process.execPath, [TSC, '-p', new URL('tsconfig.json', CLIENT_DIR).pathname])

    t ??= await createTestApp('sqlite')
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = t.app.server.address() as AddressInfo
    // Node resolves the example's `import ... from '@warden/client'` to the package itself.
    const example = await run(
      process.execPath,
      [new URL('dist/examples/quickstart.js', CLIENT_DIR).pathname],
      {
        env: { ...process.env, WARDEN_URL: `http://127.0.0.1:${port}`, WARDEN_KEY: t.adminKey },
      },
    )
    const expected = printed(read('examples/quickstart.ts'))
    expect(expected.length).toBeGreaterThanOrEqual(3)
    expect(example.stdout.trimEnd().split('\n')).toEqual(expected)
  }, 120_000)
})
