// Drives the gateway's /v1/chat/completions with the Vercel `ai` SDK and its
// `@ai-sdk/openai-compatible` provider (installed by sdk_npm_test.cpp into the build dir):
// streamText with a tool. Usage: node ai_sdk_client.mjs BASE_URL MODULE_DIR. Prints one JSON
// object with the tool calls the SDK assembled.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { question, weatherTool } from './weather_tool.mjs';

const [baseURL, moduleDir] = process.argv.slice(2);
const require = createRequire(path.join(moduleDir, 'package.json'));
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);
const { streamText, jsonSchema, tool } = await load('ai');
const { createOpenAICompatible } = await load('@ai-sdk/openai-compatible');

const provider = createOpenAICompatible({ name: 'chatpeg', baseURL, apiKey: 'unused' });
const schema = jsonSchema(weatherTool.parameters);
const result = streamText({
  model: provider('test-model'),
  prompt: question,
  tools: {
    [weatherTool.name]: tool({ description: weatherTool.description, inputSchema: schema }),
  },
});
const calls = await result.toolCalls;
console.log(JSON.stringify({
  tool_calls: calls.map((c) => ({ name: c.toolName, input: c.input ?? c.args })),
  finish_reason: await result.finishReason,
}));
