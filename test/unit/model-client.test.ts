import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSimulator } from '../../simulator/app.js';
import { createChatModel, ModelCallFailed } from '../../providers/index.js';

// The agents' model client (providers/openai-chat, the `openai` package) against the simulator's
// chat completions: tool calls, the final answer, and each fault as the run's activity reads it.

const user = (content: string) => [
  { role: 'system', content: 'You are a test agent.' },
  { role: 'user', content },
];
const tools = [{ name: 'get_profile', description: 'The profile', parameters: { type: 'object', properties: {} } }];

test(
  'the simulated model calls the scripted tools, then answers; faults are retryable or not as they should be',
  { timeout: 30_000 },
  async (t) => {
    const sim = await createSimulator().listen(0);
    t.after(() => sim.close());
    const model = createChatModel({ modelApiUrl: `${sim.url}/v1`, modelApiKey: 'k', modelTimeoutMs: 500 });

    const script = 'CALL get_profile {"x":1}\nANSWER got {{last}} after {{tools}}';
    const first = await model.complete({ model: 'sim', messages: user(script), tools });
    assert.equal(first.toolCalls.length, 1);
    assert.deepEqual([first.toolCalls[0].name, first.toolCalls[0].arguments], ['get_profile', '{"x":1}']);
    assert.ok(first.usage.promptTokens > 0 && first.usage.completionTokens > 0);
    const second = await model.complete({
      model: 'sim',
      messages: [
        ...user(script),
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: first.toolCalls[0].id, type: 'function', function: { name: 'get_profile', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: first.toolCalls[0].id, content: '{"name":"Acme"}' },
      ],
      tools,
    });
    assert.equal(second.toolCalls.length, 0);
    assert.equal(second.content, 'got {"name":"Acme"} after 1');

    const failure = async (prompt: string) => {
      try {
        await model.complete({ model: 'sim', messages: user(prompt), tools });
      } catch (err) {
        assert.ok(err instanceof ModelCallFailed, String(err));
        return err;
      }
      assert.fail(`no failure for ${prompt}`);
    };
    for (const [prompt, retryable, status] of [
      ['FAULT 429 1\nANSWER a', true, 429],
      ['FAULT 500 1\nANSWER b', true, 500],
      ['FAULT TIMEOUT 1 2000\nANSWER c', true, null],
      ['GARBAGE', false, null],
    ] as const) {
      const err = await failure(prompt);
      assert.equal(err.retryable, retryable, prompt);
      assert.equal(err.status, status, prompt);
    }
    // A fault counts requests: the retry of the 429 turn is answered.
    assert.equal((await model.complete({ model: 'sim', messages: user('FAULT 429 1\nANSWER a'), tools })).content, 'a');
    // Malformed arguments reach the caller as written: the run's activity refuses them (domain/agents parseToolArguments).
    const malformed = await model.complete({ model: 'sim', messages: user('MALFORMED get_profile'), tools });
    assert.throws(() => JSON.parse(String(malformed.toolCalls[0].arguments)));
  },
);
