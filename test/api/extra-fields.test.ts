import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, problem, type TestApp } from '../helpers/app.js'
import { STORE_KINDS } from '../helpers/stores.js'
import { startUpstreamDouble, type UpstreamDouble } from '../helpers/upstream-double.js'

/**
 * PROVIDER_<NAME>_EXTRA_FIELDS (docs/configuration.md): the top-level fields a provider takes
 * beyond OpenAI's API pass through for that provider's applications, and only for them.
 */
describe.each(STORE_KINDS)('provider extra fields (%s)', (kind) => {
  let t: TestApp
  let double: UpstreamDouble

  beforeAll(async () => {
    double = await startUpstreamDouble()
    t = await createTestApp(kind, {
      PROVIDER_VLLM_BASE_URL: double.baseUrl,
      PROVIDER_VLLM_EXTRA_FIELDS: 'min_p,repetition_penalty,chat_template_kwargs',
      PROVIDER_OPENAI_BASE_URL: double.baseUrl,
    })
    for (const [id, provider] of [
      ['local', 'vllm'],
      ['hosted', 'openai'],
    ]) {
      const res = await t.request({
        method: 'POST',
        url: '/v1/applications',
        payload: { id, name: id, description: '', provider, model: 'm' },
      })
      expect(res.statusCode, res.body).toBe(201)
    }
  })

  afterAll(async () => {
    await t?.close()
    await double?.close()
  })

  const chat = (app: string, extra: Record<string, unknown>) =>
    t.request({
      method: 'POST',
      url: `/v1/applications/${app}/chat/completions`,
      payload: { messages: [{ role: 'user', content: 'Hello' }], ...extra },
    })

  it('passes the listed fields to that provider as sent', async () => {
    const res = await chat('local', {
      min_p: 0.05,
      repetition_penalty: 1.1,
      chat_template_kwargs: { enable_thinking: false },
      temperature: 0.2,
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(double.received.at(-1)?.body).toMatchObject({
      min_p: 0.05,
      repetition_penalty: 1.1,
      chat_template_kwargs: { enable_thinking: false },
      temperature: 0.2,
    })
  })

  it('refuses them for a provider that does not list them, and any field no provider lists', async () => {
    const sent = double.received.length
    const other = await chat('hosted', { min_p: 0.05 })
    expect(problem(other, 422, 'validation_error').errors).toEqual([
      { pointer: '/min_p', detail: 'is not a known field' },
    ])
    const unknown = await chat('local', { top_a: 0.1 })
    expect(problem(unknown, 422, 'validation_error').errors).toEqual([
      { pointer: '/top_a', detail: 'is not a known field' },
    ])
    expect(double.received.length).toBe(sent)
  })
})
