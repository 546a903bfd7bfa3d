// Drives the gateway's /v1/chat/completions with the Vercel `ai` SDK and its
// `@ai-sdk/openai-compatible` provider (installed by sdk_npm_test.cpp into the build dir):
// streamText with a tool. Usage: node ai_sdk_client.mjs BASE_URL MODULE_DIR. Prints one JSON
// object with the tool calls the SDK assembled.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [baseURL, moduleDir] = process.argv.slice(2);
const require = createRequire(path.join(moduleDir, 'package.json'));
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);
const { streamText, jsonSchema, tool } = await load('ai');
const { createOpenAICompatible } = await load('@ai-sdk/openai-compatible');

const provider = createOpenAICompatible({ name: 'chatpeg', baseURL, apiKey: 'unused' });
const schema = jsonSchema({
  type: 'object',
  properties: { city: { type: 'string' }, days: { type: 'integer' } },
  required: ['city'],
});
const result = streamText({
  model: provider('test-model'),
  prompt: 'Weather in Paris?',
  tools: { get_weather: tool({ description: 'Weather for a city', inputSchema: schema }) },
});
const calls = await result.toolCalls;
console.log(JSON.stringify({
  tool_calls: calls.map((c) => ({ name: c.toolName, input: c.input ?? c.args })),
  finish_reason: await result.finishReason,
}));
