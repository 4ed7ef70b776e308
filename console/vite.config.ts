import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { defineConfig, type Plugin } from 'vite'

const root = fileURLToPath(new URL('.', import.meta.url))
const outDir = fileURLToPath(new URL('../dist/console', import.meta.url))
/** The budget for everything the console downloads, gzipped. */
const BUDGET_BYTES = 300 * 1024

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : [path]
  })
}

/** Prints the gzipped size of the whole build, and fails it when over budget. */
function sizeReport(): Plugin {
  return {
    name: 'warden-console-size',
    apply: 'build',
    closeBundle() {
      const total = files(outDir).reduce((sum, path) => sum + gzipSync(readFileSync(path)).length, 0)
      const kb = (total / 1024).toFixed(1)
      process.stdout.write(`console: ${kb} KB gzipped in dist/console (budget 300 KB)\n`)
      if (total > BUDGET_BYTES) throw new Error(`console bundle is ${kb} KB gzipped, over the 300 KB budget`)
    },
  }
}

export default defineConfig({
  root,
  base: '/console/',
  // JSX compiles to Preact's automatic runtime; no Babel preset needed.
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  resolve: {
    // The typed client, from its source (as in tsconfig.json): no build of it comes first.
    alias: {
      '@warden/client': fileURLToPath(new URL('../clients/typescript/src/index.ts', import.meta.url)),
    },
  },
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    // The Content-Security-Policy allows no inline script or style: every asset is a file.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
  plugins: [sizeReport()],
})
