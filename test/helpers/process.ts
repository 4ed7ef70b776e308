import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const WARDEN_BIN = fileURLToPath(new URL('../../bin/warden.js', import.meta.url))

const baseEnv = (env: Record<string, string>) => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  LOG_LEVEL: 'info',
  ...env,
})

export interface CliResult {
  status: number | null
  stdout: string
  stderr: string
}

/** Runs `warden <args>` to completion. */
export function runCli(args: string[], env: Record<string, string>): CliResult {
  const result = spawnSync(process.execPath, [WARDEN_BIN, ...args], {
    env: baseEnv(env),
    encoding: 'utf8',
    timeout: 30_000,
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

export interface RunningServer {
  proc: ChildProcess
  url: string
  port: number
  /** Everything the process printed on standard output so far. */
  stdout(): string
  /** Resolves once standard output contains `text` (a process that ends first rejects). */
  printed(text: string): Promise<void>
  /** Resolves with the exit code, once everything the process printed has been read. */
  exited: Promise<number | null>
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/**
 * Starts `warden serve` on a free port and resolves once it listens. The metrics listener is off
 * unless `env` sets METRICS_PORT: servers started together would all claim the default 9464.
 * `cwd` is the directory it runs in (the default store is `./data/warden.db` there).
 */
export async function startServer(
  env: Record<string, string>,
  options: { cwd?: string } = {},
): Promise<RunningServer> {
  const proc = spawn(process.execPath, [WARDEN_BIN, 'serve'], {
    env: baseEnv({ PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  })
  let out = ''
  let err = ''
  proc.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk
  })
  proc.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk
  })
  const exited = new Promise<number | null>((resolve) => proc.once('close', (code) => resolve(code)))
  // Ready when it says it listens (a start that never does fails at the test's timeout). The first
  // admin key, when one is made, is written before that line (server.ts).
  const port = await new Promise<number>((resolve, reject) => {
    const check = () => {
      const match = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
      if (match) {
        proc.stdout?.off('data', check)
        resolve(Number(match[1]))
      }
    }
    proc.stdout?.on('data', check)
    exited.then((code) => reject(new Error(`server exited with ${code}:\n${out}\n${err}`)))
  })
  return {
    proc,
    port,
    url: `http://127.0.0.1:${port}`,
    stdout: () => out,
    printed: (text) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!out.includes(text)) return
          proc.stdout?.off('data', check)
          resolve()
        }
        proc.stdout?.on('data', check)
        check()
        exited.then(() => reject(new Error(`the process ended without printing ${text}:\n${out}`)))
      }),
    exited,
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null) proc.kill(signal)
      return exited
    },
  }
}

/**
 * `workers` clients, each running `step(i, worker)` (i numbers the steps of all of them) until
 * `stop`. A step resolves `true` when the server acknowledged its write (the step records it), or
 * `false` for any other answer; a step that throws was cut off by the server's end.
 * `untilAcknowledged(n)` resolves once n steps have been acknowledged: the point to act at mid-load.
 */
export function driveUntilStopped(workers: number, step: (i: number, worker: number) => Promise<boolean>) {
  let otherAnswers = 0
  let cutOff = 0
  let acknowledged = 0
  let running = true
  let n = 0
  const waiting: { count: number; resolve: () => void }[] = []
  const loops = Array.from({ length: workers }, async (_, worker) => {
    while (running) {
      try {
        if (await step(n++, worker)) {
          acknowledged++
          for (const waiter of waiting.filter((w) => w.count <= acknowledged)) {
            waiting.splice(waiting.indexOf(waiter), 1)
            waiter.resolve()
          }
        } else otherAnswers++
      } catch {
        cutOff++
      }
    }
  })
  return {
    counts: () => ({ otherAnswers, cutOff }),
    untilAcknowledged: (count: number) =>
      count <= acknowledged
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            waiting.push({ count, resolve })
          }),
    async stop() {
      running = false
      await Promise.all(loops)
    },
  }
}
