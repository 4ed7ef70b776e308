// Builds dist/ (tsc, then the bundle bin/warden.js runs) when it is missing or older than any
// source file, and the console (dist/console/) when it is missing or older than console/ or the
// typed client it is built on, so `npm start` always runs the code in src/ and serves the
// console in console/.
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const root = new URL('..', import.meta.url).pathname
const built = join(root, 'dist', 'warden.mjs')
const consoleBuilt = join(root, 'dist', 'console', 'index.html')

function newest(dir) {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return latest
}

const run = (script, args) =>
  execFileSync(process.execPath, [join(root, script), ...args], { stdio: 'inherit' })
const packageJson = statSync(join(root, 'package.json')).mtimeMs

const sources = Math.max(newest(join(root, 'src')), packageJson)
if (!existsSync(built) || statSync(built).mtimeMs < sources) {
  process.stderr.write('warden: building dist/ ...\n')
  run('node_modules/typescript/bin/tsc', ['-p', join(root, 'tsconfig.build.json')])
  run('scripts/bundle.mjs', [])
  run('scripts/generate-client.mjs', [])
}

// The console is built from the typed client's source too (clients/typescript/src).
const consoleSources = Math.max(
  newest(join(root, 'console')),
  newest(join(root, 'clients', 'typescript', 'src')),
  packageJson,
)
if (!existsSync(consoleBuilt) || statSync(consoleBuilt).mtimeMs < consoleSources) {
  process.stderr.write('warden: building the console into dist/console/ ...\n')
  run('node_modules/vite/bin/vite.js', [
    'build',
    '--config',
    join(root, 'console', 'vite.config.ts'),
    '--logLevel',
    'warn',
  ])
}
