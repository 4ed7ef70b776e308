import { once } from 'node:events'
import { createReadStream, createWriteStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { Command, CommanderError, InvalidArgumentError } from 'commander'
import { VERSION } from './app.js'
import { loadConfig } from './config.js'
import { ConfigError } from './environment.js'
import { ListenError, serve } from './server.js'
import { SCOPES, type Scope } from './services/credentials.js'
import { createServices, type Services } from './services/index.js'
import { prepareStore } from './services/store-setup.js'
import { ImportError, TransferService } from './services/transfer.service.js'
import { openStore } from './store/database.js'
import { isUniqueViolation } from './store/dialect.js'

/** A failure the operator can fix: printed as one line, exit code 1. */
class CliError extends Error {}

function parseScopes(value: string): Scope[] {
  const scopes = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (scopes.length === 0) throw new InvalidArgumentError('name at least one scope')
  for (const scope of scopes) {
    if (!(SCOPES as readonly string[]).includes(scope)) {
      throw new InvalidArgumentError(`unknown scope "${scope}" (known: ${SCOPES.join(', ')})`)
    }
  }
  return scopes as Scope[]
}

function parseUnixTime(value: string): number {
  if (!/^\d{1,12}$/.test(value)) throw new InvalidArgumentError('must be Unix seconds')
  return Number(value)
}

const NAMES: Record<string, [string, string]> = {
  workspace: ['workspace', 'workspaces'],
  api_key: ['api key', 'api keys'],
  application: ['application', 'applications'],
  policy: ['policy', 'policies'],
  policy_revision: ['policy revision', 'policy revisions'],
  evaluation: ['evaluation log entry', 'evaluation log entries'],
}
const summary = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([kind, n]) => `${n} ${NAMES[kind]?.[n === 1 ? 0 : 1] ?? kind}`)
    .join(', ')

/** Runs an operator command against the store named by DATABASE_URL, migrating it first. */
async function withServices<T>(action: (services: Services) => Promise<T>): Promise<T> {
  const config = loadConfig()
  const store = openStore(config.store)
  try {
    await prepareStore(store)
    return await action(createServices({ store, config }))
  } finally {
    await store.close()
  }
}

export function buildCli(): Command {
  const program = new Command()
    .name('warden')
    .description('Warden: a self-hosted control plane for LLM guardrails.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')

  program
    .command('serve')
    .description(
      'Run the HTTP server (PORT, HOST, DATABASE_URL, LOG_LEVEL, WARDEN_ADMIN_KEY, RATE_LIMIT_PER_MINUTE, JUDGE_*, PROVIDER_*, EVALUATION_LOG_CONTENT, EVALUATION_RETENTION_DAYS, METRICS_PORT, METRICS_HOST; see the README).',
    )
    .action(async () => {
      await serve(loadConfig())
    })

  program
    .command('migrate')
    .description(
      'Apply pending schema migrations to the store named by DATABASE_URL (and render stored documents again if their version changed), then exit.',
    )
    .action(async () => {
      const config = loadConfig()
      const store = openStore(config.store)
      try {
        const { migrations, documents } = await prepareStore(store)
        if (migrations.length > 0) console.log(`applied: ${migrations.join(', ')}`)
        if (documents > 0) console.log(`rendered ${documents} stored documents again`)
        if (migrations.length === 0 && documents === 0) console.log('the store is up to date')
      } finally {
        await store.close()
      }
    })

  program
    .command('export')
    .description('Write the whole store (keys as hashes only) as JSON lines, to move it to another store.')
    .option('--output <file>', 'write to this file instead of standard output')
    .option('--skip-evaluation-log', 'leave the evaluation log out (by far the largest part of a store)')
    .action(async (options: { output?: string; skipEvaluationLog?: boolean }) => {
      const config = loadConfig()
      const store = openStore(config.store)
      const out = options.output ? createWriteStream(options.output, { flags: 'wx' }) : process.stdout
      try {
        await prepareStore(store)
        const counts = await new TransferService(store).export(
          async (line) => {
            if (!out.write(`${line}\n`)) await once(out, 'drain')
          },
          { evaluationLog: !options.skipEvaluationLog },
        )
        if (out !== process.stdout) await new Promise<void>((resolve) => out.end(() => resolve()))
        console.error(`exported ${summary(counts)}`)
      } finally {
        await store.close()
      }
    })

  program
    .command('import')
    .description('Load an export into the (empty) store named by DATABASE_URL, in one transaction.')
    .option('--input <file>', 'read from this file instead of standard input')
    .option('--skip-evaluation-log', 'leave out the evaluation log entries the export holds')
    .action(async (options: { input?: string; skipEvaluationLog?: boolean }) => {
      const input = options.input ? createReadStream(options.input) : process.stdin
      const config = loadConfig()
      const store = openStore(config.store)
      // readline consumes its input from the start: take the iterator now, before any await,
      // or the lines read in between are lost.
      const lines = createInterface({ input, crlfDelay: Infinity })[Symbol.asyncIterator]()
      try {
        await prepareStore(store)
        const counts = await new TransferService(store).import(
          { [Symbol.asyncIterator]: () => lines },
          { evaluationLog: !options.skipEvaluationLog },
        )
        console.error(`imported ${summary(counts)}`)
      } catch (error) {
        if (error instanceof ImportError)
          throw new CliError(`import failed, nothing was written: ${error.message}`)
        throw error
      } finally {
        await store.close()
      }
    })

  const workspaces = program.command('workspaces').description('Manage workspaces (tenants).')
  workspaces
    .command('create')
    .description('Create a workspace.')
    .argument('<name>', 'workspace name, unique')
    .action(async (name: string) => {
      if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) {
        throw new CliError('a workspace name is 1 to 64 characters of A-Z, a-z, 0-9, ".", "_", "-"')
      }
      const workspace = await withServices(async (s) => {
        try {
          return await s.operator.createWorkspace(name)
        } catch (error) {
          if (isUniqueViolation(error)) throw new CliError(`workspace "${name}" already exists`)
          throw error
        }
      })
      console.log(`created workspace ${workspace.name} (${workspace.id})`)
    })

  workspaces
    .command('list')
    .description(
      'List workspaces, oldest first, with how many of their keys work (neither revoked nor expired).',
    )
    .option('--json', 'one JSON object per line')
    .action(async (options: { json?: boolean }) => {
      const list = await withServices((s) => s.operator.listWorkspaces())
      if (options.json) {
        for (const workspace of list) console.log(JSON.stringify(workspace))
        return
      }
      console.log(['ID', 'NAME', 'CREATED', 'ACTIVE KEYS'].join('\t'))
      for (const w of list)
        console.log([w.id, w.name, new Date(w.created * 1000).toISOString(), w.active_keys].join('\t'))
    })

  const keys = program.command('keys').description('Manage API keys.')
  keys
    .command('create')
    .description('Create an API key and print its secret (shown only this once).')
    .requiredOption('--workspace <name>', 'workspace the key belongs to')
    .requiredOption('--scopes <list>', `comma-separated scopes: ${SCOPES.join(', ')}`, parseScopes)
    .option('--name <name>', 'a label for the key')
    .option('--expires-at <unix>', 'expiry time in Unix seconds', parseUnixTime)
    .action(async (options: { workspace: string; scopes: Scope[]; name?: string; expiresAt?: number }) => {
      const { key, secret } = await withServices(async (s) => {
        const workspace = await s.operator.findWorkspace(options.workspace)
        if (!workspace) {
          throw new CliError(
            `no workspace "${options.workspace}"; create it with: warden workspaces create ${options.workspace}`,
          )
        }
        return s.operator.createKey({
          workspaceId: workspace.id,
          name: options.name ?? null,
          scopes: options.scopes,
          expiresAt: options.expiresAt ?? null,
        })
      })
      console.error(
        `created key ${key.id} in workspace ${options.workspace}; the secret is shown only this once:`,
      )
      console.log(secret)
    })

  keys
    .command('list')
    .description('List API keys (never their secrets).')
    .option('--workspace <name>', 'only this workspace')
    .option('--json', 'one JSON object per line')
    .action(async (options: { workspace?: string; json?: boolean }) => {
      const list = await withServices(async (s) => {
        if (options.workspace === undefined) return s.operator.listKeys()
        const workspace = await s.operator.findWorkspace(options.workspace)
        if (!workspace) throw new CliError(`no workspace "${options.workspace}"`)
        return s.operator.listKeys(workspace.id)
      })
      if (options.json) {
        for (const key of list) console.log(JSON.stringify(key))
        return
      }
      const state = (k: (typeof list)[number]) =>
        k.revoked_at !== null
          ? 'revoked'
          : k.expires_at !== null && k.expires_at * 1000 <= Date.now()
            ? 'expired'
            : 'active'
      console.log(['ID', 'WORKSPACE', 'PREFIX', 'STATE', 'SCOPES', 'NAME'].join('\t'))
      for (const k of list) {
        console.log(
          [k.id, k.workspace, `${k.prefix}…`, state(k), k.scopes.join(','), k.name ?? ''].join('\t'),
        )
      }
    })

  keys
    .command('revoke')
    .description('Revoke an API key; it stops working on its next request.')
    .argument('<id>', 'key id, from warden keys list')
    .action(async (id: string) => {
      const found = await withServices((s) => s.operator.revokeKey(id))
      if (!found) throw new CliError(`no key with id ${id}`)
      console.log(`revoked key ${id}`)
    })

  return program
}

/** Entry point of the `warden` command. */
export async function main(argv: string[] = process.argv): Promise<void> {
  const program = buildCli().exitOverride()
  try {
    await program.parseAsync(argv)
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander already printed the message (or the help/version text).
      process.exit(error.exitCode)
    }
    const message =
      error instanceof CliError || error instanceof ConfigError || error instanceof ListenError
        ? error.message
        : `unexpected error: ${error instanceof Error ? error.message : String(error)}`
    process.stderr.write(`warden: ${message}\n`)
    process.exit(1)
  }
}
