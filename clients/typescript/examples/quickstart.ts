import { createWardenClient } from '@warden/client'

const warden = createWardenClient({
  baseUrl: process.env.WARDEN_URL ?? 'http://127.0.0.1:8080',
  apiKey: process.env.WARDEN_KEY,
})

// An application (without an id, the server gives it one) and a policy on it: no card numbers or
// e-mail addresses in the user's input or the model's output.
const application = await warden.POST('/v1/applications', {
  body: {
    name: 'Support bot',
    description: 'Answers questions about orders.',
    provider: 'openai',
    model: 'gpt-4o-mini',
  },
})
if (application.error) throw new Error(application.error.detail)
const application_id = application.data.id

const policy = await warden.POST('/v1/applications/{application_id}/policies', {
  params: { path: { application_id } },
  body: {
    id: 'no-pii',
    rules: [{ type: 'pii', flagged: ['credit_card', 'email'] }],
    target: ['input', 'output'],
    override_response: 'Sorry, I cannot share that.',
  },
})
if (policy.error) throw new Error(policy.error.detail)

// Evaluate a conversation before sending it to the model, and do what `action` says.
const evaluation = await warden.POST('/v1/applications/{application_id}/evaluations', {
  params: { path: { application_id } },
  body: { messages: [{ role: 'user', content: 'My card is 4111 1111 1111 1111, can I get a refund?' }] },
})
if (evaluation.error) throw new Error(evaluation.error.detail)
const { verdict, action, override_response } = evaluation.data
console.log(verdict, action, override_response)
// fail override Sorry, I cannot share that.

// Which rule fired, and where: offsets count code points in messages[index] or context[index].
for (const result of evaluation.data.policies) {
  for (const rule of result.rules) {
    for (const finding of rule.findings) {
      console.log(
        result.id,
        rule.index,
        finding.kind,
        `${finding.source}[${finding.index}]`,
        finding.start,
        finding.end,
      )
    }
  }
}
// no-pii 0 credit_card messages[0] 11 30

// The evaluation log, newest first: failures only, a page of 20.
const log = await warden.GET('/v1/applications/{application_id}/evaluations', {
  params: { path: { application_id }, query: { verdict: 'fail', limit: 20 } },
})
if (log.error) throw new Error(log.error.detail)
for (const entry of log.data.data) console.log(entry.id === evaluation.data.id, entry.source, entry.verdict)
// true api fail
