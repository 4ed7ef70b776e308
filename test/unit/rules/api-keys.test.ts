import { lintSource } from '@secretlint/core'
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend'
import { describe, expect, it } from 'vitest'
import { piiMatcher } from '../../../src/rules/detectors/index.js'
import { fakeBase62, msg } from './detector-helpers.js'

const keys = piiMatcher(['api_key'])
const found = (text: string) => keys(msg(text)).map((f) => f.text)

// Format-correct fakes, built from parts so no file holds a key-shaped literal.
const b = fakeBase62
const FAKES: Record<string, string> = {
  'openai legacy': `sk-${b(20, 1)}T3BlbkFJ${b(20, 2)}`,
  'openai project': `sk-proj-${b(74, 3)}T3BlbkFJ${b(74, 4)}`,
  anthropic: `sk-ant-api03-${b(93, 5)}AA`,
  'aws access key id': `AKIA${b(16, 6).toUpperCase()}`,
  'aws session key id': `ASIA${b(16, 7).toUpperCase()}`,
  'github classic': `ghp_${b(36, 8)}`,
  'github oauth': `gho_${b(36, 9)}`,
  'github fine-grained': `github_pat_${b(22, 10)}_${b(59, 11)}`,
  'slack bot': `xoxb-${'1234567890'}-${'0987654321'}-${b(24, 12)}`,
  'slack webhook': `https://hooks.slack.com/services/T${b(8, 13)}/B${b(8, 14)}/${b(24, 15)}`,
  google: `AIza${b(35, 16)}`,
  'stripe live': `sk_live_${b(24, 17)}`,
  'stripe test': `rk_test_${b(24, 18)}`,
  'stripe publishable': `pk_live_${b(24, 19)}`,
  npm: `npm_${b(36, 20)}`,
  sendgrid: `SG.${b(22, 21)}.${b(43, 22)}`,
  shopify: `shpat_${b(32, 23).toLowerCase()}`,
  linear: `lin_api_${b(40, 24)}`,
}
const PEM = `-----BEGIN RSA PRIVATE KEY-----\nMII${b(200, 25)}\n${b(64, 26)}==\n-----END RSA PRIVATE KEY-----`
const URL_CREDENTIALS = 'postgres://app_user:s3cr3t-Pass@db.internal.example:5432/warden'

describe('api keys', () => {
  for (const [name, key] of Object.entries(FAKES)) {
    it(`finds ${name} keys`, () => {
      expect(found(`token: ${key} (rotate it)`)).toEqual([key])
    })
  }
  it('finds private key blocks from BEGIN to END, and cut-short blocks up to their body end', () => {
    expect(found(`key:\n${PEM}\nthanks`)).toEqual([PEM])
    const cut = PEM.slice(0, 120)
    expect(found(`${cut}\n\nand more words`)).toEqual([cut])
    const json = `{"private_key": "-----BEGIN PRIVATE KEY-----\\nMII${b(80, 27)}\\n-----END PRIVATE KEY-----\\n"}`
    expect(found(json)).toEqual([json.slice(17, json.length - 4)])
  })
  it('finds the credentials of a URL, not its host', () => {
    expect(found(`DATABASE_URL=${URL_CREDENTIALS}`)).toEqual(['app_user:s3cr3t-Pass'])
    expect(found('see https://example.com/a:b and mailto:x@y.z')).toEqual([])
  })
  it('finds an AWS secret access key after its name', () => {
    const secret = b(40, 28)
    expect(found(`aws_secret_access_key = ${secret}`)).toEqual([secret])
  })
  it('leaves words and prose alone', () => {
    expect(found('use sk-learn-and-numpy-together-for-data or ghp_short or AKIA alone')).toEqual([])
    expect(found('sk-ant-something short')).toEqual([])
  })
  it('finds at least everything secretlint’s recommended preset finds', async () => {
    const corpus = [...Object.values(FAKES), PEM, URL_CREDENTIALS].map((k, i) => `line ${i}: ${k}`).join('\n')
    const result = await lintSource({
      source: { filePath: '/corpus.txt', content: corpus, contentType: 'text', ext: '.txt' },
      options: {
        config: { rules: [{ id: '@secretlint/secretlint-rule-preset-recommend', rule: recommended }] },
      },
    })
    const ours = keys(msg(corpus))
    expect(result.messages.length).toBeGreaterThan(10)
    for (const message of result.messages) {
      const [start, end] = message.range
      // No astral characters in the corpus: UTF-16 and code point offsets agree.
      const covered = ours.some((f) => f.start < end && start < f.end)
      expect(covered, `${message.ruleId}: ${corpus.slice(start, end)}`).toBe(true)
    }
  })
})
