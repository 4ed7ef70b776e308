#!/usr/bin/env node
// The `warden` command. It runs the compiled code, bundled into dist/warden.mjs (built by
// `npm install` and `npm start`; scripts/bundle.mjs).
import { existsSync } from 'node:fs'

const entry = new URL('../dist/warden.mjs', import.meta.url)
if (!existsSync(entry)) {
  process.stderr.write('warden: dist/ is missing; run `npm run build` first\n')
  process.exit(1)
}
const { main } = await import(entry.href)
await main()
