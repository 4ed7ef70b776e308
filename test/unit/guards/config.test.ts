import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../../src/environment.js'
import { formatOptions, isGranted, loadGuards } from '../../../src/guards/config.js'
import { insideBand } from '../../../src/rules/band.js'

describe('guard detectors in the environment', () => {
  it('has none by default', () => {
    expect(loadGuards({}).names).toEqual([])
    expect(loadGuards({}).find('llamaguard')).toBeUndefined()
  })

  it('reads a guard under its lower-cased NAME, with the documented defaults', () => {
    const guards = loadGuards({
      GUARD_LLAMAGUARD_FORMAT: 'llama-guard',
      GUARD_LLAMAGUARD_BASE_URL: 'http://127.0.0.1:11434/v1/',
      GUARD_LLAMAGUARD_MODEL: 'llama-guard3:1b',
      GUARD_PROMPT_GUARD_FORMAT: 'text-classification',
      GUARD_PROMPT_GUARD_BASE_URL: 'http://127.0.0.1:8081',
      GUARD_PROMPT_GUARD_MODEL: 'ignored by TEI',
      GUARD_PROMPT_GUARD_API_KEY: 'tei-key',
      GUARD_PROMPT_GUARD_TIMEOUT_MS: '250',
      GUARD_PROMPT_GUARD_WORKSPACES: 'acme, beta',
      GUARD_PROMPT_GUARD_POSITIVE_LABELS: 'MALICIOUS',
      GUARD_PROMPT_GUARD_WINDOW_CHARS: '1000',
      GUARD_PROMPT_GUARD_CASCADE: '0.2,0.8',
    })
    expect(guards.names).toEqual(['llamaguard', 'prompt_guard'])
    expect(guards.find('llamaguard')).toEqual({
      name: 'llamaguard',
      envName: 'LLAMAGUARD',
      format: 'llama-guard',
      baseUrl: 'http://127.0.0.1:11434/v1',
      model: 'llama-guard3:1b',
      apiKey: null,
      timeoutMs: 10_000,
      maxConcurrency: 16,
      workspaces: null,
      logprobs: true,
      positiveLabels: ['MALICIOUS', 'INJECTION', 'JAILBREAK', 'UNSAFE', 'TOXIC'],
      windowChars: 1500,
      guardianConfig: 'template',
      cascade: null,
    })
    const tei = guards.find('prompt_guard')
    expect(tei).toMatchObject({
      format: 'text-classification',
      model: null,
      apiKey: 'tei-key',
      timeoutMs: 250,
      positiveLabels: ['MALICIOUS'],
      windowChars: 1000,
      cascade: { low: 0.2, high: 0.8 },
    })
    expect(tei && isGranted(tei, 'acme')).toBe(true)
    expect(tei && isGranted(tei, 'other')).toBe(false)
    const llama = guards.find('llamaguard')
    expect(llama && isGranted(llama, 'anyone')).toBe(true)
    expect(llama && formatOptions(llama)).toEqual({
      model: 'llama-guard3:1b',
      logprobs: true,
      positiveLabels: ['MALICIOUS', 'INJECTION', 'JAILBREAK', 'UNSAFE', 'TOXIC'],
      windowChars: 1500,
      guardianConfig: 'template',
    })
  })

  it('reads format options', () => {
    const guards = loadGuards({
      GUARD_GRANITE_FORMAT: 'granite-guardian',
      GUARD_GRANITE_BASE_URL: 'http://127.0.0.1:11434/v1',
      GUARD_GRANITE_MODEL: 'ibm/granite3.3-guardian:8b',
      GUARD_GRANITE_GUARDIAN_CONFIG: 'system',
      GUARD_GRANITE_LOGPROBS: 'off',
      GUARD_OPENAI_FORMAT: 'openai-moderation',
      GUARD_OPENAI_BASE_URL: 'https://api.openai.com/v1',
    })
    expect(guards.find('granite')).toMatchObject({ guardianConfig: 'system', logprobs: false })
    expect(guards.find('openai')).toMatchObject({ model: null })
  })

  it.each([
    [{ GUARD_MODEL_FORMAT: 'llama-guard' }, /GUARD_MODEL_FORMAT: "model" is reserved/],
    [{ GUARD_JUDGE_FORMAT: 'qwen3guard' }, /"judge" is reserved/],
    [{ GUARD_X_BASE_URL: 'http://h/v1' }, /^GUARD_X_FORMAT is required when other GUARD_X_ settings are set/],
    [{ GUARD_X_WORKSPACES: 'acme' }, /GUARD_X_FORMAT is required/],
    [{ GUARD_X_FORMAT: 'llamaguard' }, /GUARD_X_FORMAT must be one of llama-guard, granite-guardian/],
    [{ GUARD_X_FORMAT: 'qwen3guard' }, /GUARD_X_BASE_URL is required with GUARD_X_FORMAT/],
    [{ GUARD_X_FORMAT: 'qwen3guard', GUARD_X_BASE_URL: 'nope' }, /GUARD_X_BASE_URL is not a valid URL/],
    [{ GUARD_X_FORMAT: 'qwen3guard', GUARD_X_BASE_URL: 'ftp://h' }, /GUARD_X_BASE_URL must start with http/],
    [
      { GUARD_X_FORMAT: 'qwen3guard', GUARD_X_BASE_URL: 'http://u:secret@h/v1', GUARD_X_MODEL: 'm' },
      /GUARD_X_BASE_URL must not carry credentials; set GUARD_X_API_KEY instead/,
    ],
    [
      { GUARD_X_FORMAT: 'qwen3guard', GUARD_X_BASE_URL: 'http://h/v1' },
      /GUARD_X_MODEL is required for the qwen3guard/,
    ],
    [
      { GUARD_X_FORMAT: 'openai-moderation', GUARD_X_BASE_URL: 'http://h/v1', GUARD_X_TIMEOUT_MS: '0' },
      /GUARD_X_TIMEOUT_MS must be between 1 and 600000/,
    ],
    [
      { GUARD_X_FORMAT: 'openai-moderation', GUARD_X_BASE_URL: 'http://h/v1', GUARD_X_WORKSPACES: ' , ' },
      /GUARD_X_WORKSPACES names no workspace/,
    ],
    [
      { GUARD_X_FORMAT: 'openai-moderation', GUARD_X_BASE_URL: 'http://h/v1', GUARD_X_POSITIVE_LABELS: 'a' },
      /GUARD_X_POSITIVE_LABELS applies to text-classification only, not to openai-moderation/,
    ],
    [
      { GUARD_X_FORMAT: 'text-classification', GUARD_X_BASE_URL: 'http://h', GUARD_X_POSITIVE_LABELS: ' ,' },
      /GUARD_X_POSITIVE_LABELS names no label/,
    ],
    [
      { GUARD_X_FORMAT: 'text-classification', GUARD_X_BASE_URL: 'http://h', GUARD_X_CASCADE: '0.8,0.2' },
      /GUARD_X_CASCADE must be two scores low,high with 0 <= low < high <= 1/,
    ],
    [
      { GUARD_X_FORMAT: 'text-classification', GUARD_X_BASE_URL: 'http://h', GUARD_X_CASCADE: '0.2' },
      /GUARD_X_CASCADE must be two scores/,
    ],
    [
      { GUARD_X_FORMAT: 'text-classification', GUARD_X_BASE_URL: 'http://h', GUARD_X_CASCADE: '0.2,1.5' },
      /GUARD_X_CASCADE must be two scores/,
    ],
    [
      {
        GUARD_X_FORMAT: 'granite-guardian',
        GUARD_X_BASE_URL: 'http://h',
        GUARD_X_MODEL: 'g',
        GUARD_X_GUARDIAN_CONFIG: 'env',
      },
      /GUARD_X_GUARDIAN_CONFIG must be one of template, system/,
    ],
    [
      {
        GUARD_X_FORMAT: 'llama-guard',
        GUARD_X_BASE_URL: 'http://h',
        GUARD_X_MODEL: 'g',
        GUARD_X_LOGPROBS: 'maybe',
      },
      /GUARD_X_LOGPROBS must be on or off/,
    ],
    [{ GUARD_X_FORMAT: 'llama-guard', GUARD_X_URL: 'http://h' }, /GUARD_X_URL is not a guard setting/],
  ])('refuses %j with one clear line naming the variable', (env, message) => {
    expect(() => loadGuards(env)).toThrow(ConfigError)
    expect(() => loadGuards(env)).toThrow(message)
  })

  it('never puts the API key in an error', () => {
    expect(() =>
      loadGuards({
        GUARD_X_FORMAT: 'qwen3guard',
        GUARD_X_BASE_URL: 'http://h/v1',
        GUARD_X_API_KEY: 'sk-secret-123',
      }),
    ).toThrow(/^(?!.*sk-secret-123)/)
  })
})

describe('the cascade band', () => {
  it('asks the guard inside the band, bounds included, and always without one', () => {
    const band = { low: 0.2, high: 0.8 }
    expect(insideBand(0.2, band)).toBe(true)
    expect(insideBand(0.5, band)).toBe(true)
    expect(insideBand(0.8, band)).toBe(true)
    expect(insideBand(0.19, band)).toBe(false)
    expect(insideBand(0.81, band)).toBe(false)
    expect(insideBand(0.99, null)).toBe(true)
  })
})

describe('start-up', () => {
  it('loadConfig reads the guards and fails on a bad one with its one line', async () => {
    const { loadConfig } = await import('../../../src/config.js')
    const config = loadConfig({
      GUARD_QWEN_FORMAT: 'qwen3guard',
      GUARD_QWEN_BASE_URL: 'http://127.0.0.1:8000/v1',
      GUARD_QWEN_MODEL: 'Qwen/Qwen3Guard-Gen-4B',
    })
    expect(config.guards.names).toEqual(['qwen'])
    expect(() => loadConfig({ GUARD_QWEN_FORMAT: 'qwen3guard' })).toThrow(
      'GUARD_QWEN_BASE_URL is required with GUARD_QWEN_FORMAT',
    )
  })
})
