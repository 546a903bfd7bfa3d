// Drives the gateway's /v1/messages with the official `@anthropic-ai/sdk` npm client
// (installed by sdk_npm_test.cpp into the build dir). Usage: node anthropic_client.mjs BASE_URL
// MODULE_DIR API_KEY. Prints one JSON object with what the client saw; the C++ test asserts.
import { createRequire } from 'node:module';
import path from 'node:path';

import { question, weatherTool } from './weather_tool.mjs';

const [baseURL, moduleDir, apiKey] = process.argv.slice(2);
const require = createRequire(path.join(moduleDir, 'package.json'));
const sdk = require('@anthropic-ai/sdk');
const Anthropic = sdk.Anthropic ?? sdk.default ?? sdk;

const client = new Anthropic({ baseURL, apiKey, maxRetries: 0, timeout: 30000 });
const tools = [{
  name: weatherTool.name,
  description: weatherTool.description,
  input_schema: weatherTool.parameters,
}];
const messages = [{ role: 'user', content: question }];
const out = {};

out.create = await client.messages.create({ model: 'test-model', max_tokens: 64, messages, tools });
const stream = client.messages.stream({
  model: 'test-model', max_tokens: 64, messages, tools,
  thinking: { type: 'enabled', budget_tokens: 1024 },
});
out.stream = await stream.finalMessage();
out.count = await client.messages.countTokens({ model: 'test-model', messages });
try {
  await client.messages.create({ model: 'test-model', messages });  // no max_tokens
  out.bad = { status: 0 };
} catch (e) {
  out.bad = { status: e.status, typed: e instanceof Anthropic.BadRequestError };
}
try {
  const wrong = new Anthropic({ baseURL, apiKey: 'wrong-key', maxRetries: 0 });
  await wrong.messages.create({ model: 'test-model', max_tokens: 8, messages });
  out.unauthorized = { status: 0 };
} catch (e) {
  out.unauthorized = { status: e.status, typed: e instanceof Anthropic.AuthenticationError };
}
console.log(JSON.stringify(out));
