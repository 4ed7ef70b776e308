// Bundles the compiled code (dist/, from tsc) and the pure-JavaScript packages it imports into one
// ES module, dist/warden.mjs, which bin/warden.js runs. Node loads one file far faster than the
// hundreds of small modules behind Fastify, Kysely and TypeBox: start-up to the first answer
// from /healthz goes from about 0.9–1.1 s to about 0.55–0.65 s here (bench/README.md).
//
// Left out, and loaded from node_modules as usual: native addons, packages that read files of
// their own at run time (Swagger UI's assets, pino's transports), and drivers loaded only when
// configured.
import { build } from 'esbuild'

const root = new URL('..', import.meta.url).pathname

const external = [
  'better-sqlite3',
  're2',
  'onnxruntime-node',
  'pg',
  'ioredis',
  'pino',
  'pino-pretty',
  '@fastify/swagger',
  '@fastify/swagger-ui',
]

/** What both bundles share: one ES module for Node 20, with the packages above left out. */
const options = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external,
  // Stack traces map back to the TypeScript with `node --enable-source-maps`.
  sourcemap: 'linked',
  // Bundled CommonJS packages call require() for Node's built-in modules.
  banner: {
    js: "import { createRequire as __wardenRequire } from 'node:module';\nconst require = __wardenRequire(import.meta.url);",
  },
  logLevel: 'warning',
}

await build({ ...options, entryPoints: ['dist/cli.js'], outfile: 'dist/warden.mjs' })

// The evaluation pool's worker (src/evaluation/pool.ts), beside dist/warden.mjs where
// the bundle looks for it: a worker loads one file as fast as the server does.
await build({
  ...options,
  entryPoints: ['dist/evaluation/worker.js'],
  outfile: 'dist/evaluation-worker.mjs',
})

// The thread that parses large JSON bodies (src/http/json-body.ts), beside dist/warden.mjs where
// the bundle looks for it.
await build({
  ...options,
  entryPoints: ['dist/http/json-parse-thread.js'],
  outfile: 'dist/json-parse-thread.js',
})

// The SQLite store's threads (src/store/sqlite-writer.ts), beside dist/warden.mjs where the bundle
// looks for them, under the names they have beside the store's module.
for (const thread of ['sqlite-writer-thread', 'sqlite-checkpointer-thread'])
  await build({ ...options, entryPoints: [`dist/store/${thread}.js`], outfile: `dist/${thread}.js` })
