// Drives the gateway with the official `openai` npm client (installed by openai_npm_test.cpp
// into the build dir). Usage: node openai_client.mjs BASE_URL MODULE_DIR. Prints one JSON
// object with what the client saw; the C++ test asserts on it.
import { createRequire } from 'node:module';
import path from 'node:path';

import { chatTools as tools, question } from './weather_tool.mjs';

const [baseURL, moduleDir] = process.argv.slice(2);
const require = createRequire(path.join(moduleDir, 'package.json'));
const OpenAI = require('openai');

const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0, timeout: 30000 });
const messages = [{ role: 'user', content: question }];
const out = {};

const plain = await client.chat.completions.create({ model: 'test-model', messages, tools });
out.plain = {
  finish_reason: plain.choices[0].finish_reason,
  content: plain.choices[0].message.content,
  tool_calls: plain.choices[0].message.tool_calls,
  usage: plain.usage,
};

const stream = client.beta.chat.completions.stream({
  model: 'test-model', messages, tools, stream_options: { include_usage: true },
});
const final = await stream.finalChatCompletion();
out.stream = {
  finish_reason: final.choices[0].finish_reason,
  content: final.choices[0].message.content,
  tool_calls: final.choices[0].message.tool_calls,
  usage: final.usage,
};

try {
  await client.chat.completions.create({ model: 'test-model', messages, temperature: 'hot' });
  out.error = { status: 0 };
} catch (e) {
  out.error = { api_error: e instanceof OpenAI.APIError, status: e.status, param: e.param };
}
console.log(JSON.stringify(out));
