// Drives the gateway, in front of a real llama-server, with the official `openai` npm client
// (installed by llama_server_e2e_test.cpp into the build dir). Usage:
//   node llama_server_client.mjs BASE_URL MODULE_DIR REPEATS MAX_TOKENS
// Sends each forced-call request (tool_choice required and a named function, plain and
// streaming) REPEATS times, with seeds 1..REPEATS so that a run is repeatable, then one
// tool_choice auto request and two bad requests. Prints one JSON object with what the client
// saw; the C++ test asserts on it.
import { createRequire } from 'node:module';
import path from 'node:path';

import { chatTools as tools, question } from './weather_tool.mjs';

const [baseURL, moduleDir, repeatsText, maxTokensText] = process.argv.slice(2);
const require = createRequire(path.join(moduleDir, 'package.json'));
const OpenAI = require('openai');
const repeats = Number(repeatsText);
const maxTokens = Number(maxTokensText);

const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0, timeout: 300000 });
const base = {
  model: 'test-model',
  messages: [{ role: 'user', content: question }],
  tools,
  max_tokens: maxTokens,
  parallel_tool_calls: false,
};

function failure(e) {
  return { error: String(e), api_error: e instanceof OpenAI.APIError, status: e.status ?? null };
}

function seen(message, finishReason) {
  return {
    finish_reason: finishReason,
    content: message.content ?? null,
    reasoning_content: message.reasoning_content ?? null,
    tool_calls: (message.tool_calls ?? []).map(c => ({
      type: c.type, id: c.id, name: c.function.name, arguments: c.function.arguments,
    })),
  };
}

const out = { forced: [], auto: null, bad_type: null, unknown_tool: null };
const choices = {
  required: 'required',
  named: { type: 'function', function: { name: 'get_weather' } },
};
for (const [label, toolChoice] of Object.entries(choices)) {
  for (const stream of [false, true]) {
    for (let i = 0; i < repeats; ++i) {
      const row = { choice: label, stream, seed: i + 1 };
      const body = { ...base, tool_choice: toolChoice, seed: i + 1 };
      try {
        if (stream) {
          const s = client.beta.chat.completions.stream(body);
          const f = await s.finalChatCompletion();
          Object.assign(row, seen(f.choices[0].message, f.choices[0].finish_reason));
        } else {
          const r = await client.chat.completions.create(body);
          Object.assign(row, seen(r.choices[0].message, r.choices[0].finish_reason));
        }
      } catch (e) {
        Object.assign(row, failure(e));
      }
      out.forced.push(row);
    }
  }
}
try {
  const r = await client.chat.completions.create({ ...base, tool_choice: 'auto' });
  out.auto = seen(r.choices[0].message, r.choices[0].finish_reason);
} catch (e) {
  out.auto = failure(e);
}
try {
  await client.chat.completions.create({ ...base, temperature: 'hot' });
  out.bad_type = { error: 'no error' };
} catch (e) {
  out.bad_type = failure(e);
}
try {
  await client.chat.completions.create(
      { ...base, tool_choice: { type: 'function', function: { name: 'nope' } } });
  out.unknown_tool = { error: 'no error' };
} catch (e) {
  out.unknown_tool = failure(e);
}
console.log(JSON.stringify(out));
