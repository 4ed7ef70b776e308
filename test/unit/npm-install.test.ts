import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/**
 * `npm install` shows what it is doing while it compiles the native modules (better-sqlite3, re2)
 * where no prebuilt binary can be had: minutes that would otherwise pass in silence. The
 * project's `.npmrc` asks npm for it, and npm reads it so.
 */
describe('npm install in this repository', () => {
  it('runs install scripts in the foreground, printing their output as it comes', () => {
    const asked = spawnSync('npm', ['config', 'get', 'foreground-scripts'], {
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
      encoding: 'utf8',
    })
    expect(asked.status, asked.stderr).toBe(0)
    expect(asked.stdout.trim()).toBe('true')
  })

  it('skips onnxruntime-node’s download of CUDA binaries, so that an offline install works', () => {
    const asked = spawnSync('npm', ['config', 'get', 'onnxruntime-node-install'], {
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
      encoding: 'utf8',
    })
    expect(asked.status, asked.stderr).toBe(0)
    expect(asked.stdout.trim()).toBe('skip')
  })
})
