// What each rule engine costs on one text of 1 KB and of 100 KB: the median of repeated runs,
// after a warm-up. Run after `npm run build` (tsc puts src/ under dist/):
//
//   node bench/detectors.mjs
//
// The texts are prose with a little of everything the detectors look for (an email, a card,
// a phone number, an IP address, a key), so every confirmation step runs. Also measured: the
// alternatives that were not adopted (secretlint on the hot path, libphonenumber-js's own
// scanner), for the record in src/rules/detectors/.
import { findNumbers } from 'libphonenumber-js/max'
import { shippedClassifier } from '../dist/models/shipped.js'
import { injectionScorer, toxicityScorer } from '../dist/rules/detectors/classifier/scorers.js'
import {
  keywordsMatcher,
  lengthMatcher,
  piiMatcher,
  redactText,
  regexMatcher,
  toxicityHeuristic,
} from '../dist/rules/detectors/index.js'

const paragraph =
  'Hello team, the quarterly report is attached; reach me at ann.lee@example.com or +44 20 7946 0958. ' +
  'The staging host is 10.20.30.40 and the old card on file was 4111 1111 1111 1111, which we removed. ' +
  'Please do not share the deploy token ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 outside this thread. ' +
  'Meeting notes follow: budget, hiring, the roadmap for next year and a few open questions about pricing. '
const sized = (n) => paragraph.repeat(Math.ceil(n / paragraph.length)).slice(0, n)
const texts = { '1 KB': sized(1_000), '100 KB': sized(100_000) }

function median(run, text) {
  const target = { source: 'messages', index: 0, role: 'user', text }
  const repeats = text.length > 10_000 ? 15 : 300
  for (let i = 0; i < Math.min(repeats, 20); i++) run(target)
  const times = []
  for (let i = 0; i < repeats; i++) {
    const start = performance.now()
    run(target)
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  return times[times.length >> 1]
}

const pii = piiMatcher(null)
const detectors = {
  'pii (all seven)': pii,
  'pii: email': piiMatcher(['email']),
  'pii: phone': piiMatcher(['phone']),
  'pii: credit_card': piiMatcher(['credit_card']),
  'pii: iban': piiMatcher(['iban']),
  'pii: ssn': piiMatcher(['ssn']),
  'pii: ip_address': piiMatcher(['ip_address']),
  'pii: api_key': piiMatcher(['api_key']),
  'keywords (10 phrases)': keywordsMatcher([
    'project zeus',
    'confidential',
    'salary',
    'layoffs',
    'merger',
    'password',
    'internal only',
    'roadmap',
    'acquisition',
    'lawsuit',
  ]),
  'keywords (1,000 phrases)': keywordsMatcher(Array.from({ length: 1000 }, (_, i) => `codename ${i} alpha`)),
  'regex \\d{3}-\\d{4} (RE2)': regexMatcher('\\d{3}-\\d{4}'),
  'regex (?i)token\\s+\\w+ (RE2)': regexMatcher('(?i)token\\s+\\w+'),
  length: lengthMatcher(50_000),
  'toxicity heuristic (all)': toxicityHeuristic(null),
  'toxicity heuristic (no profanity)': toxicityHeuristic(['hate', 'harassment', 'violence', 'self_harm']),
  'prompt_injection model': (t) => injectionModel(t, 0.5),
  'toxicity model': (t) => toxicityModel(t, 0.5),
  'redact (pii findings)': (t) => redactText(t.text, pii(t)),
}

const injectionModel = injectionScorer(shippedClassifier('prompt_injection'))
const toxicityModel = toxicityScorer(shippedClassifier('toxicity'), null, null)

const alternatives = {
  'libphonenumber-js findNumbers (not used)': (t) => findNumbers(t.text, 'US'),
}
try {
  const { lintSource } = await import('@secretlint/core')
  const { creator } = await import('@secretlint/secretlint-rule-preset-recommend')
  const config = { rules: [{ id: '@secretlint/secretlint-rule-preset-recommend', rule: creator }] }
  // Async: measured to completion, which is what a caller would wait for.
  alternatives['secretlint recommended (not used, async)'] = async (t) =>
    lintSource({
      source: { filePath: '/t.txt', content: t.text, contentType: 'text', ext: '.txt' },
      options: { config },
    })
} catch {
  // secretlint is a dev dependency; absent in a production install.
}

async function medianAsync(run, text) {
  const target = { source: 'messages', index: 0, role: 'user', text }
  const repeats = text.length > 10_000 ? 9 : 100
  for (let i = 0; i < 5; i++) await run(target)
  const times = []
  for (let i = 0; i < repeats; i++) {
    const start = performance.now()
    await run(target)
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  return times[times.length >> 1]
}

const pad = (s, n) => s.padEnd(n)
console.log(
  `${pad('detector', 44)}${Object.keys(texts)
    .map((k) => k.padStart(12))
    .join('')}   (median ms per text)`,
)
for (const [name, run] of Object.entries(detectors)) {
  const cells = Object.values(texts).map((text) => median(run, text).toFixed(3).padStart(12))
  console.log(`${pad(name, 44)}${cells.join('')}`)
}
for (const [name, run] of Object.entries(alternatives)) {
  const cells = []
  for (const text of Object.values(texts)) cells.push((await medianAsync(run, text)).toFixed(3).padStart(12))
  console.log(`${pad(name, 44)}${cells.join('')}`)
}
