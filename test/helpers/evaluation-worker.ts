import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build } from 'esbuild'

const root = new URL('../..', import.meta.url).pathname
/** Inside the checkout, so that the worker finds node_modules (re2) and models/ as a build does. */
const out = join(root, 'test-results', 'evaluation-workers')

let built: Promise<URL> | null = null

/**
 * The evaluation pool's worker, bundled from the TypeScript sources the tests run (a build's
 * dist/ may be older): tests hand it to createServices, which has none of its own from src/.
 */
export function evaluationWorker(): Promise<URL> {
  built ??= (async () => {
    const outfile = join(out, `evaluation-worker-${process.pid}.mjs`)
    await build({
      entryPoints: [join(root, 'src/evaluation/worker.ts')],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: ['re2', 'onnxruntime-node'],
      banner: {
        js: "import { createRequire as __wardenRequire } from 'node:module';\nconst require = __wardenRequire(import.meta.url);",
      },
      logLevel: 'warning',
    })
    return pathToFileURL(outfile)
  })()
  return built
}

/** A worker entry that behaves as `behaviour` says instead of evaluating: for the pool's failure paths. */
export function brokenWorker(behaviour: 'exit' | 'silent' | 'throw'): URL {
  mkdirSync(out, { recursive: true })
  const file = join(out, `broken-worker-${behaviour}.mjs`)
  const body = {
    exit: 'process.exit(3)',
    silent: '',
    throw: "throw new Error('worker broke')",
  }[behaviour]
  writeFileSync(
    file,
    `import { parentPort } from 'node:worker_threads'\nparentPort.on('message', (m) => { if (m.kind === 'task') { ${body} } })\nparentPort.postMessage({ kind: 'ready' })\n`,
  )
  return pathToFileURL(file)
}
