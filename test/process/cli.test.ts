import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { systemClock } from '../../src/clock.js'
import { AuthenticationService } from '../../src/services/authentication.service.js'
import { openStore } from '../../src/store/database.js'
import { runCli } from '../helpers/process.js'
import { freshStoreConfig, STORE_KINDS, type TestStoreConfig } from '../helpers/stores.js'

describe.each(STORE_KINDS)('the warden command (%s)', (kind) => {
  let store: TestStoreConfig
  beforeAll(async () => {
    store = await freshStoreConfig(kind)
  })
  afterAll(async () => {
    await store.drop()
  })

  const warden = (...args: string[]) => runCli(args, store.env)
  const authenticate = async (secret: string) => {
    const s = openStore(store.config)
    try {
      return await new AuthenticationService({ store: s, clock: systemClock }).authenticate(secret)
    } finally {
      await s.close()
    }
  }

  it.each([
    [[], 'Usage: warden'],
    [['serve'], 'Usage: warden serve'],
    [['migrate'], 'Usage: warden migrate'],
    [['keys'], 'Usage: warden keys'],
    [['keys', 'create'], 'Usage: warden keys create'],
    [['keys', 'list'], 'Usage: warden keys list'],
    [['keys', 'revoke'], 'Usage: warden keys revoke'],
    [['workspaces', 'create'], 'Usage: warden workspaces create'],
    [['workspaces', 'list'], 'Usage: warden workspaces list'],
  ])('prints help for %j', (args, usage) => {
    const result = warden(...args, '--help')
    expect(result.status).toBe(0)
    expect(result.stdout).toContain(usage)
  })

  it('creates a workspace, and refuses a second one of the same name with one clear line', () => {
    const created = warden('workspaces', 'create', 'acme')
    expect(created.status).toBe(0)
    expect(created.stdout).toMatch(/^created workspace acme \(/)
    const again = warden('workspaces', 'create', 'acme')
    expect(again.status).toBe(1)
    expect(again.stderr).toBe('warden: workspace "acme" already exists\n')
  })

  it('creates a key that authenticates with exactly its scopes, lists it without its secret, and revokes it', async () => {
    warden('workspaces', 'create', 'keys-ws')
    const created = warden(
      'keys',
      'create',
      '--workspace',
      'keys-ws',
      '--scopes',
      'applications:read,policies:write',
      '--name',
      'ci',
    )
    expect(created.status).toBe(0)
    const secret = created.stdout.trim()
    expect(secret).toMatch(/^wdn_[A-Za-z0-9_-]{43}$/)
    const principal = await authenticate(secret)
    expect(principal?.scopes).toEqual(['applications:read', 'policies:write'])

    const list = warden('keys', 'list', '--workspace', 'keys-ws')
    expect(list.status).toBe(0)
    expect(list.stdout).toContain(principal?.keyId)
    expect(list.stdout).toContain('active')
    expect(list.stdout).not.toContain(secret)
    expect(list.stdout).not.toContain(secret.slice(12))

    const json = warden('keys', 'list', '--json')
    const rows = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(rows.find((r) => r.id === principal?.keyId)).toMatchObject({
      workspace: 'keys-ws',
      name: 'ci',
      revoked_at: null,
    })

    const revoked = warden('keys', 'revoke', principal?.keyId ?? '')
    expect(revoked.status).toBe(0)
    expect(await authenticate(secret)).toBeNull()
    expect(warden('keys', 'list', '--workspace', 'keys-ws').stdout).toContain('revoked')
  })

  it('lists workspaces oldest first, with the count of their working keys', () => {
    warden('workspaces', 'create', 'list-a')
    warden('workspaces', 'create', 'list-b')
    const key = (workspace: string, ...more: string[]) =>
      warden('keys', 'create', '--workspace', workspace, '--scopes', 'admin', ...more)
    key('list-a')
    key('list-a')
    key('list-a', '--expires-at', '1')
    key('list-b')
    const listed = warden('keys', 'list', '--workspace', 'list-b', '--json')
    warden('keys', 'revoke', JSON.parse(listed.stdout).id)

    const table = warden('workspaces', 'list')
    expect(table.status).toBe(0)
    const [header, ...lines] = table.stdout.trim().split('\n')
    expect(header).toBe('ID\tNAME\tCREATED\tACTIVE KEYS')
    const names = lines.map((line) => line.split('\t')[1])
    expect(names.indexOf('list-a')).toBeLessThan(names.indexOf('list-b'))
    const a = lines.find((line) => line.split('\t')[1] === 'list-a')?.split('\t')
    expect(a?.[2]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    // Two working keys: the third has expired.
    expect(a?.[3]).toBe('2')

    const rows = warden('workspaces', 'list', '--json')
      .stdout.trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(rows.find((row) => row.name === 'list-b')).toEqual({
      id: expect.any(String),
      name: 'list-b',
      created: expect.any(Number),
      active_keys: 0,
    })
  })

  it('creates a key with the evaluation scopes', async () => {
    warden('workspaces', 'create', 'eval-ws')
    const created = warden(
      'keys',
      'create',
      '--workspace',
      'eval-ws',
      '--scopes',
      'evaluations:read,evaluations:write',
    )
    expect(created.status).toBe(0)
    const principal = await authenticate(created.stdout.trim())
    expect(principal?.scopes).toEqual(['evaluations:read', 'evaluations:write'])
  })

  it.each([
    [
      ['keys', 'create', '--workspace', 'nowhere', '--scopes', 'admin'],
      /^warden: no workspace "nowhere"; create it with/,
    ],
    [['keys', 'revoke', 'no-such-key'], /^warden: no key with id no-such-key\n$/],
    [['workspaces', 'create', 'bad name!'], /^warden: a workspace name is/],
    [['keys', 'create', '--workspace', 'acme', '--scopes', 'root'], /unknown scope "root"/],
    [['keys', 'create', '--scopes', 'admin'], /required option '--workspace <name>'/],
    [['teleport'], /unknown command 'teleport'/],
  ])('fails with a non-zero exit and a clear line for %j', (args, message) => {
    const result = warden(...args)
    expect(result.status).not.toBe(0)
    expect(result.stderr).toMatch(message)
  })

  it('reports a bad DATABASE_URL in one line', () => {
    const result = runCli(['keys', 'list'], { DATABASE_URL: 'mysql://nope' })
    expect(result.status).toBe(1)
    expect(result.stderr).toBe('warden: DATABASE_URL must start with sqlite: or postgres://\n')
  })

  it.each([
    [{ JUDGE_BASE_URL: 'http://127.0.0.1:11434/v1' }, 'JUDGE_MODEL is required when JUDGE_BASE_URL is set'],
    [
      { JUDGE_BASE_URL: 'http://127.0.0.1:11434/v1', JUDGE_MODEL: 'm', JUDGE_TIMEOUT_MS: 'soon' },
      'JUDGE_TIMEOUT_MS must be a whole number, got "soon"',
    ],
    [
      { PROVIDER_OPENAI_BASE_URL: 'ftp://api.example.com/v1' },
      'PROVIDER_OPENAI_BASE_URL must start with http:// or https://',
    ],
    [{ PROVIDER_TIMEOUT_MS: '0' }, 'PROVIDER_TIMEOUT_MS must be between 1 and 3600000, got 0'],
    [{ METRICS_PORT: '70000' }, 'METRICS_PORT must be between 0 and 65535, got 70000'],
    [
      { EVALUATION_LOG_CONTENT: 'everything' },
      'EVALUATION_LOG_CONTENT must be one of redacted, none, full, got "everything"',
    ],
    [{ EVALUATION_RETENTION_DAYS: '0' }, 'EVALUATION_RETENTION_DAYS must be between 1 and 36500, got 0'],
  ])('serve refuses to start on %j with a non-zero exit and one clear line', (env, line) => {
    const result = runCli(['serve'], { ...store.env, PORT: '0', METRICS_PORT: '0', ...env })
    expect(result.status).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toBe(`warden: ${line}\n`)
  })

  it('migrates a store and says when it is up to date', () => {
    const result = warden('migrate')
    expect(result.status).toBe(0)
    expect(result.stdout).toMatch(/up to date|applied/)
  })
})
