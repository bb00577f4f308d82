// An OpenAI-compatible chat-completions endpoint (POST /v1/chat/completions; tool calls, no
// streaming) answering from a deterministic policy written in the conversation's first user
// message, so an agent run, tool calls included, works offline and in tests. One directive a line:
//
//   CALL <tool> <json arguments>   one model turn calling that tool (in order, one turn each)
//   MALFORMED <tool>               a turn calling the tool with arguments that are not JSON
//   GARBAGE                        a turn answered 200 with a body that is no chat completion
//   FAULT <429|500|503|TIMEOUT> <n> [ms]   the next turn's first n requests fail that way (TIMEOUT: held ms, default 60000)
//   SLOW <ms>                      every answer of the conversation waits that long
//   ANSWER <text>                  the final answer ({{last}}: the last tool result, {{tools}}: how many)
//
// Without directives the model answers at once with a short echo of the prompt. The turn is the
// number of assistant messages already in the conversation; faults are counted per conversation
// and turn, so a retried request meets the fault's next count.
import { createHash } from 'node:crypto';
import { Router } from '@koa/router';
import type { Context } from 'koa';
import { readJson } from './body.js';
import type { SimState } from './state.js';

type Step = { kind: 'call'; tool: string; args: string } | { kind: 'malformed'; tool: string } | { kind: 'garbage' } | { kind: 'answer' };
interface Fault {
  kind: '429' | '500' | '503' | 'TIMEOUT';
  count: number;
  holdMs: number;
}
interface Policy {
  steps: { step: Step; fault: Fault | null }[];
  answer: string | null;
  slowMs: number;
}

function policyOf(prompt: string): Policy {
  const steps: Policy['steps'] = [];
  let pending: Fault | null = null;
  let answer: string | null = null;
  let slowMs = 0;
  for (const raw of prompt.split('\n')) {
    const line = raw.trim();
    const [word, ...rest] = line.split(/\s+/);
    if (word === 'CALL' && rest[0]) {
      steps.push({
        step: { kind: 'call', tool: rest[0], args: line.slice(line.indexOf(rest[0]) + rest[0].length).trim() || '{}' },
        fault: pending,
      });
      pending = null;
    } else if (word === 'MALFORMED' && rest[0]) {
      steps.push({ step: { kind: 'malformed', tool: rest[0] }, fault: pending });
      pending = null;
    } else if (word === 'GARBAGE') {
      steps.push({ step: { kind: 'garbage' }, fault: pending });
      pending = null;
    } else if (word === 'FAULT' && ['429', '500', '503', 'TIMEOUT'].includes(rest[0] ?? '')) {
      pending = { kind: rest[0] as Fault['kind'], count: Number(rest[1] ?? 1) || 1, holdMs: Number(rest[2] ?? 60_000) || 60_000 };
    } else if (word === 'SLOW') slowMs = Number(rest[0]) || 0;
    else if (word === 'ANSWER') answer = line.slice('ANSWER'.length).trim();
  }
  steps.push({ step: { kind: 'answer' }, fault: pending });
  return { steps, answer, slowMs };
}

interface Message {
  role?: string;
  content?: unknown;
  tool_calls?: unknown[];
}

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));
const openAiError = (ctx: Context, status: number, message: string, type: string) => {
  ctx.status = status;
  ctx.body = { error: { message, type, param: null, code: null } };
};

export function modelRouter(state: SimState): Router {
  const r = new Router({ prefix: '/v1' });
  /** Requests seen per conversation and turn (for FAULT counts). */
  const attempts = new Map<string, number>();
  let seq = 0;

  r.post('/chat/completions', async (ctx) => {
    if (!/^Bearer\s+\S+/.test(ctx.get('authorization'))) return openAiError(ctx, 401, 'Missing bearer key', 'invalid_request_error');
    const body = (await readJson(ctx)) as { model?: unknown; messages?: unknown; stream?: unknown } | null;
    if (!body || typeof body.model !== 'string' || !Array.isArray(body.messages))
      return openAiError(ctx, 400, 'model and messages are required', 'invalid_request_error');
    if (body.stream === true) return openAiError(ctx, 400, 'streaming is not simulated', 'invalid_request_error');
    const messages = body.messages as Message[];
    const firstUser = messages.find((m) => m.role === 'user');
    const prompt = typeof firstUser?.content === 'string' ? firstUser.content : '';
    const policy = policyOf(prompt);
    const turn = messages.filter((m) => m.role === 'assistant').length;
    const { step, fault } = policy.steps[Math.min(turn, policy.steps.length - 1)];
    const key = `${createHash('sha256')
      .update(JSON.stringify(messages.slice(0, 2)))
      .digest('hex')}:${turn}`;
    const attempt = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, attempt);
    if (attempts.size > 100_000) attempts.clear();
    state.log.debug({ turn, attempt, step: step.kind }, 'model turn');

    if (policy.slowMs > 0) await new Promise((res) => setTimeout(res, policy.slowMs));
    if (fault && attempt <= fault.count) {
      if (fault.kind === 'TIMEOUT') await new Promise((res) => setTimeout(res, fault.holdMs));
      else if (fault.kind === '429') {
        ctx.set('retry-after', '1');
        return openAiError(ctx, 429, 'Rate limit reached (simulated)', 'rate_limit_error');
      } else return openAiError(ctx, Number(fault.kind), 'The server had an error (simulated)', 'server_error');
    }
    if (step.kind === 'garbage') {
      ctx.status = 200;
      ctx.body = { unexpected: 'this is not a chat completion' };
      return;
    }
    const promptTokens = tokens(JSON.stringify(messages));
    const id = `chatcmpl-sim${++seq}`;
    let message: Record<string, unknown>;
    let finish: string;
    if (step.kind === 'call' || step.kind === 'malformed') {
      const args = step.kind === 'call' ? step.args : '{"to": "+1555", oops';
      message = {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: [{ id: `call_${turn + 1}_${seq}`, type: 'function', function: { name: step.tool, arguments: args } }],
      };
      finish = 'tool_calls';
    } else {
      const results = messages.filter((m) => m.role === 'tool');
      const last = results.length ? String(results[results.length - 1].content ?? '').slice(0, 200) : '';
      const text =
        policy.answer !== null
          ? policy.answer.replace(/\{\{last\}\}/g, last).replace(/\{\{tools\}\}/g, String(results.length))
          : `Done: ${prompt.slice(0, 80)}`;
      message = { role: 'assistant', content: text, refusal: null };
      finish = 'stop';
    }
    const completionTokens = tokens(JSON.stringify(message));
    ctx.status = 200;
    ctx.body = {
      id,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [{ index: 0, finish_reason: finish, logprobs: null, message }],
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    };
  });
  return r;
}
