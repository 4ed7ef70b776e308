import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { ConfigError, workspaceGrant } from '../../src/environment.js'

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: 'sqlite:./data/warden.db',
      store: { kind: 'sqlite', path: './data/warden.db' },
      logLevel: 'info',
      adminKey: null,
      rateLimitPerMinute: 6000,
      bodyLimit: 1_048_576,
    })
    expect(Object.isFrozen(config)).toBe(true)
  })

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@db:5432/warden',
      LOG_LEVEL: 'debug',
      WARDEN_ADMIN_KEY: 'a-very-long-operator-secret-123',
      RATE_LIMIT_PER_MINUTE: '0',
      DATABASE_POOL_SIZE: '20',
    })
    expect(config).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      store: { kind: 'postgres', url: 'postgres://u@db:5432/warden', poolSize: 20, statementTimeoutMs: 5000 },
      logLevel: 'debug',
      adminKey: 'a-very-long-operator-secret-123',
      rateLimitPerMinute: 0,
    })
  })

  it('accepts sqlite:///absolute paths', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite:///var/lib/warden.db' }).store).toEqual({
      kind: 'sqlite',
      path: '/var/lib/warden.db',
      walTruncateBytes: 64 * 1_048_576,
    })
  })

  it('reads the write-ahead log bound of a SQLite store in MB', () => {
    const store = loadConfig({ DATABASE_URL: 'sqlite:./w.db', SQLITE_WAL_TRUNCATE_MB: '8' }).store
    expect(store).toMatchObject({ kind: 'sqlite', walTruncateBytes: 8 * 1_048_576 })
    expect(() => loadConfig({ DATABASE_URL: 'sqlite:./w.db', SQLITE_WAL_TRUNCATE_MB: '0' })).toThrow(
      /SQLITE_WAL_TRUNCATE_MB/,
    )
  })

  it.each([
    [{ PORT: 'eighty' }, 'PORT must be a whole number'],
    [{ PORT: '70000' }, 'PORT must be between 0 and 65535'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must start with sqlite: or postgres://'],
    [{ DATABASE_URL: 'sqlite:' }, 'DATABASE_URL names no SQLite file'],
    [{ WARDEN_ADMIN_KEY: 'short' }, 'WARDEN_ADMIN_KEY must be 24 to 256'],
    [{ WARDEN_ADMIN_KEY: 'has a space in it and is long enough' }, 'WARDEN_ADMIN_KEY must be 24 to 256'],
    [{ RATE_LIMIT_PER_MINUTE: '-1' }, 'RATE_LIMIT_PER_MINUTE must be a whole number'],
  ])('rejects %j with one clear line', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError)
    expect(() => loadConfig(env)).toThrow(message)
  })

  describe('the judge', () => {
    it('is off without JUDGE_BASE_URL', () => {
      expect(loadConfig({}).judge).toBeNull()
    })

    it('reads every JUDGE_ variable, with the documented defaults', () => {
      expect(
        loadConfig({ JUDGE_BASE_URL: 'http://127.0.0.1:11434/v1/', JUDGE_MODEL: 'llama3' }).judge,
      ).toEqual({
        baseUrl: 'http://127.0.0.1:11434/v1',
        model: 'llama3',
        apiKey: null,
        timeoutMs: 10_000,
        maxConcurrency: 16,
      })
      expect(
        loadConfig({
          JUDGE_BASE_URL: 'https://api.example.com/v1',
          JUDGE_MODEL: 'gpt-4o-mini',
          JUDGE_API_KEY: 'sk-test',
          JUDGE_TIMEOUT_MS: '2500',
          JUDGE_MAX_CONCURRENCY: '4',
        }).judge,
      ).toEqual({
        baseUrl: 'https://api.example.com/v1',
        model: 'gpt-4o-mini',
        apiKey: 'sk-test',
        timeoutMs: 2500,
        maxConcurrency: 4,
      })
    })

    it.each([
      [{ JUDGE_BASE_URL: 'http://127.0.0.1:11434/v1' }, /JUDGE_MODEL is required/],
      [{ JUDGE_BASE_URL: 'not a url', JUDGE_MODEL: 'm' }, /JUDGE_BASE_URL is not a valid URL/],
      [{ JUDGE_BASE_URL: 'ftp://host/v1', JUDGE_MODEL: 'm' }, /http:\/\/ or https:\/\//],
      [{ JUDGE_BASE_URL: 'http://u:p@host/v1', JUDGE_MODEL: 'm' }, /must not carry credentials/],
      [{ JUDGE_BASE_URL: 'http://host/v1', JUDGE_MODEL: 'm', JUDGE_TIMEOUT_MS: '0' }, /JUDGE_TIMEOUT_MS/],
      [
        { JUDGE_BASE_URL: 'http://host/v1', JUDGE_MODEL: 'm', JUDGE_MAX_CONCURRENCY: 'x' },
        /JUDGE_MAX_CONCURRENCY/,
      ],
    ])('refuses %j with one clear line', (env, message) => {
      expect(() => loadConfig(env)).toThrow(ConfigError)
      expect(() => loadConfig(env)).toThrow(message)
    })
  })

  describe('evaluation log, metrics and model providers', () => {
    it('has the documented defaults', () => {
      const config = loadConfig({})
      expect(config).toMatchObject({
        evaluationLogContent: 'redacted',
        evaluationRetentionDays: 30,
        metricsPort: 9464,
        metricsHost: '127.0.0.1',
        providerTimeoutMs: 60_000,
        streamWindowChars: 400,
        evaluationPoolSize: 2,
        evaluationPoolMinMs: 40,
      })
      expect(config.providers.names).toEqual([])
      expect(config.providers.find('openai')).toBeUndefined()
    })

    it('finds a provider by its name upper-cased, other characters as _', () => {
      const config = loadConfig({
        PROVIDER_OPENAI_BASE_URL: 'https://api.openai.com/v1/',
        PROVIDER_OPENAI_API_KEY: 'sk-upstream',
        PROVIDER_AZURE_EAST_BASE_URL: 'http://127.0.0.1:9000/v1',
        EVALUATION_LOG_CONTENT: 'none',
        EVALUATION_RETENTION_DAYS: '7',
        METRICS_PORT: '0',
        PROVIDER_TIMEOUT_MS: '5000',
        STREAM_WINDOW_CHARS: '120',
        EVALUATION_POOL_SIZE: '0',
        EVALUATION_POOL_MIN_MS: '5',
      })
      expect(config.providers.find('openai')).toEqual({
        baseUrl: 'https://api.openai.com/v1',
        apiKey: 'sk-upstream',
        workspaces: null,
        extraFields: new Set(),
      })
      expect(config.providers.find('OpenAI')).toEqual(config.providers.find('openai'))
      expect(config.providers.find('azure-east')).toEqual({
        baseUrl: 'http://127.0.0.1:9000/v1',
        apiKey: null,
        workspaces: null,
        extraFields: new Set(),
      })
      expect(config.providers.names).toEqual(['AZURE_EAST', 'OPENAI'])
      expect(config).toMatchObject({
        evaluationLogContent: 'none',
        evaluationRetentionDays: 7,
        metricsPort: 0,
        providerTimeoutMs: 5000,
        streamWindowChars: 120,
        evaluationPoolSize: 0,
        evaluationPoolMinMs: 5,
      })
    })

    it.each([
      [{ EVALUATION_LOG_CONTENT: 'all' }, /EVALUATION_LOG_CONTENT must be one of redacted, none, full/],
      [{ EVALUATION_RETENTION_DAYS: '0' }, /EVALUATION_RETENTION_DAYS/],
      [{ METRICS_PORT: '70000' }, /METRICS_PORT/],
      [{ STREAM_WINDOW_CHARS: '0' }, /STREAM_WINDOW_CHARS must be between 1 and 100000/],
      [{ EVALUATION_POOL_SIZE: '65' }, /EVALUATION_POOL_SIZE must be between 0 and 64/],
      [{ EVALUATION_POOL_MIN_MS: '-1' }, /EVALUATION_POOL_MIN_MS/],
      [{ STREAM_WINDOW_CHARS: '4k' }, /STREAM_WINDOW_CHARS must be a whole number/],
      [{ PROVIDER_OPENAI_BASE_URL: 'nope' }, /PROVIDER_OPENAI_BASE_URL is not a valid URL/],
      [{ PROVIDER_OPENAI_BASE_URL: 'https://u:p@x/v1' }, /PROVIDER_OPENAI_API_KEY instead/],
      [
        { PROVIDER_OPENAI_BASE_URL: 'https://x/v1', PROVIDER_OPENAI_WORKSPACES: ' , ' },
        /^PROVIDER_OPENAI_WORKSPACES names no workspace; unset it to grant every workspace$/,
      ],
      [
        { PROVIDER_OPENAI_BASE_URL: 'https://x/v1', PROVIDER_OPENAI_WORKSPACES: 'team-a, team b' },
        /^PROVIDER_OPENAI_WORKSPACES must be workspace names separated by commas .*, got "team b"$/,
      ],
      [
        { PROVIDER_INTERNAL_WORKSPACES: 'team-a' },
        /^PROVIDER_INTERNAL_WORKSPACES is set but PROVIDER_INTERNAL_BASE_URL is not/,
      ],
      [
        { PROVIDER_VLLM_BASE_URL: 'http://x/v1', PROVIDER_VLLM_EXTRA_FIELDS: 'min_p, repetition-penalty' },
        /^PROVIDER_VLLM_EXTRA_FIELDS must be top-level field names separated by commas .*, got "min_p, repetition-penalty"$/,
      ],
      [
        { PROVIDER_VLLM_BASE_URL: 'http://x/v1', PROVIDER_VLLM_EXTRA_FIELDS: 'min_p,,top_a' },
        /^PROVIDER_VLLM_EXTRA_FIELDS must be top-level field names/,
      ],
      [
        { PROVIDER_VLLM_EXTRA_FIELDS: 'min_p' },
        /^PROVIDER_VLLM_EXTRA_FIELDS is set but PROVIDER_VLLM_BASE_URL is not/,
      ],
    ])('refuses %j with one clear line', (env, message) => {
      expect(() => loadConfig(env)).toThrow(message)
    })

    it('reads the fields a provider takes beyond OpenAI from PROVIDER_<NAME>_EXTRA_FIELDS', () => {
      const config = loadConfig({
        PROVIDER_VLLM_BASE_URL: 'http://127.0.0.1:9000/v1',
        PROVIDER_VLLM_EXTRA_FIELDS: ' min_p, repetition_penalty ,chat_template_kwargs',
        PROVIDER_OPENAI_BASE_URL: 'https://api.openai.com/v1',
      })
      expect([...(config.providers.find('vllm')?.extraFields ?? [])]).toEqual([
        'min_p',
        'repetition_penalty',
        'chat_template_kwargs',
      ])
      expect(config.providers.find('openai')?.extraFields.size).toBe(0)
      expect([...config.providers.extraFields].sort()).toEqual([
        'chat_template_kwargs',
        'min_p',
        'repetition_penalty',
      ])
    })

    it('grants a provider to the workspaces named in PROVIDER_<NAME>_WORKSPACES', () => {
      const config = loadConfig({
        PROVIDER_INTERNAL_BASE_URL: 'http://127.0.0.1:9000/v1',
        PROVIDER_INTERNAL_WORKSPACES: ' team-a,team.b ,default',
      })
      expect([...(config.providers.find('internal')?.workspaces ?? [])]).toEqual([
        'team-a',
        'team.b',
        'default',
      ])
    })

    it('reads any such list with one parser (GUARD_<NAME>_WORKSPACES too)', () => {
      expect(workspaceGrant({}, 'GUARD_LLAMA_WORKSPACES')).toBeNull()
      expect([
        ...(workspaceGrant({ GUARD_LLAMA_WORKSPACES: 'a,b' }, 'GUARD_LLAMA_WORKSPACES') ?? []),
      ]).toEqual(['a', 'b'])
      expect(() => workspaceGrant({ GUARD_LLAMA_WORKSPACES: '' }, 'GUARD_LLAMA_WORKSPACES')).toThrow(
        'GUARD_LLAMA_WORKSPACES names no workspace',
      )
    })
  })

  it('asks the second stage of prompt_injection only when PROMPT_INJECTION_SECOND_STAGE is true', () => {
    expect(loadConfig({}).promptInjectionSecondStage).toBe(false)
    expect(loadConfig({ PROMPT_INJECTION_SECOND_STAGE: 'true' }).promptInjectionSecondStage).toBe(true)
    expect(loadConfig({ PROMPT_INJECTION_SECOND_STAGE: 'false' }).promptInjectionSecondStage).toBe(false)
    expect(() => loadConfig({ PROMPT_INJECTION_SECOND_STAGE: 'yes' })).toThrow(
      'PROMPT_INJECTION_SECOND_STAGE must be true or false, got "yes"',
    )
  })

  describe('tracing (OpenTelemetry’s variables)', () => {
    it('is off unless an OTLP endpoint is set, and off when disabled', () => {
      expect(loadConfig({}).tracing).toBeNull()
      expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' }).tracing).toEqual({
        url: 'http://c:4318/v1/traces',
        serviceName: 'warden',
        guardrailAttributes: false,
        captureMessageContent: false,
      })
      expect(
        loadConfig({
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9/traces',
          OTEL_SERVICE_NAME: 'warden-eu',
          TRACING_GUARDRAIL_ATTRIBUTES: ' TRUE ',
          OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
        }).tracing,
      ).toEqual({
        url: 'http://t:9/traces',
        serviceName: 'warden-eu',
        guardrailAttributes: true,
        captureMessageContent: true,
      })
      expect(
        loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_SDK_DISABLED: 'true' }).tracing,
      ).toBeNull()
      expect(
        loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_TRACES_EXPORTER: 'none' }).tracing,
      ).toBeNull()
      expect(Object.isFrozen(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c' }).tracing)).toBe(true)
    })

    it('captures no message content unless OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is true', () => {
      const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }
      const capture = (value?: string) =>
        loadConfig({
          ...endpoint,
          ...(value === undefined ? {} : { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: value }),
        }).tracing?.captureMessageContent
      expect(capture()).toBe(false)
      expect(capture('')).toBe(false)
      expect(capture('false')).toBe(false)
      expect(capture('False')).toBe(false)
      expect(capture('true')).toBe(true)
    })

    it.each([
      ['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT', 'yes'],
      ['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT', '1'],
      ['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT', 'ture'],
      ['OTEL_SDK_DISABLED', 'on'],
      ['OTEL_SDK_DISABLED', '1'],
      ['TRACING_GUARDRAIL_ATTRIBUTES', 'yes'],
      ['TRACING_GUARDRAIL_ATTRIBUTES', 'enabled'],
    ])('refuses %s=%s with one clear line, tracing on or off', (name, value) => {
      for (const endpoint of [{}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }]) {
        const load = () => loadConfig({ ...endpoint, [name]: value })
        expect(load).toThrow(ConfigError)
        expect(load).toThrow(`${name} must be true or false, got "${value}"`)
      }
    })

    it.each([
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /OTEL_EXPORTER_OTLP_ENDPOINT must start with http/],
      [
        { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' },
        /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is not a valid URL/,
      ],
    ])('refuses an endpoint that is no http(s) URL: %j', (env, message) => {
      expect(() => loadConfig(env)).toThrow(message)
    })
  })
})
