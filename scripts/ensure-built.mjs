// Builds dist/ (tsc, then the bundle bin/warden.js runs) when it is missing or older than any
// source file, so `npm start` always runs the code in src/.
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const root = new URL('..', import.meta.url).pathname
const built = join(root, 'dist', 'warden.mjs')

function newest(dir) {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return latest
}

const sources = Math.max(newest(join(root, 'src')), statSync(join(root, 'package.json')).mtimeMs)
if (!existsSync(built) || statSync(built).mtimeMs < sources) {
  process.stderr.write('warden: building dist/ ...\n')
  execFileSync(
    process.execPath,
    [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')],
    {
      stdio: 'inherit',
    },
  )
  execFileSync(process.execPath, [join(root, 'scripts', 'bundle.mjs')], { stdio: 'inherit' })
}
