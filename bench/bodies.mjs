// The request bodies the benchmarks send.

/** An application as a client would create it: provider, model and three parameters. */
export const APP_BODY = JSON.stringify({
  name: 'Support bot',
  description: 'Answers customer questions about orders and returns.',
  provider: 'openai',
  model: 'gpt-4o',
  parameters: { system_prompt: 'You are a helpful support agent.', temperature: 0.2, max_tokens: 1024 },
})
