// Drives the gateway's /v1/responses with the official `openai` npm client (installed by
// sdk_npm_test.cpp into the build dir). Usage: node responses_client.mjs BASE_URL MODULE_DIR.
// Prints one JSON object with what the client saw; the C++ test asserts on it.
import { createRequire } from 'node:module';
import path from 'node:path';

import { question, weatherTool } from './weather_tool.mjs';

const [baseURL, moduleDir] = process.argv.slice(2);
const require = createRequire(path.join(moduleDir, 'package.json'));
const OpenAI = require('openai');

const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0, timeout: 30000 });
const tools = [{ type: 'function', ...weatherTool, strict: false }];
const input = question;
const out = {};
const seen = (r) => ({ status: r.status, output: r.output, output_text: r.output_text, usage: r.usage });

out.plain = seen(await client.responses.create({ model: 'test-model', input: 'Hello' }));
out.call = seen(await client.responses.create({ model: 'test-model', input, tools }));
const stream = client.responses.stream({ model: 'test-model', input, tools });
out.stream_events = [];
stream.on('event', (e) => out.stream_events.push(e.type));
out.stream = seen(await stream.finalResponse());
out.required = seen(await client.responses.create({
  model: 'test-model', input, tools, tool_choice: 'required' }));
out.named = seen(await client.responses.create({
  model: 'test-model', input, tools, tool_choice: { type: 'function', name: 'get_weather' } }));
try {
  await client.responses.create({ model: 'test-model', input, previous_response_id: 'resp_1' });
  out.error = { status: 0 };
} catch (e) {
  out.error = { api_error: e instanceof OpenAI.APIError, status: e.status, param: e.param };
}
console.log(JSON.stringify(out));
