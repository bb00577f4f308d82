import OpenAI from 'openai';
import { ModelCallFailed, type ChatModel, type ChatModelAnswer, type ChatModelRequest } from '../types.js';

// The agents' model through the `openai` package's chat-completions client (docs/decisions.md,
// "Agent runs' model client"): any OpenAI-compatible endpoint (MODEL_API_URL), the simulator's in
// tests. The client's own retries are off: Temporal retries the model turn's activity, so a 429 or a
// 5xx is retried once, with the activity's backoff, and shows in the run's history.

export interface ChatModelSettings {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
}

export function createOpenAiChatModel(s: ChatModelSettings): ChatModel {
  const client = new OpenAI({ baseURL: s.baseUrl, apiKey: s.apiKey, timeout: s.timeoutMs, maxRetries: 0 });
  return {
    async complete(req: ChatModelRequest): Promise<ChatModelAnswer> {
      let res: OpenAI.Chat.Completions.ChatCompletion;
      try {
        res = await client.chat.completions.create({
          model: req.model,
          messages: req.messages as OpenAI.Chat.Completions.ChatCompletionMessageParam[],
          ...(req.tools.length
            ? {
                tools: req.tools.map((t) => ({
                  type: 'function' as const,
                  function: { name: t.name, description: t.description, parameters: t.parameters },
                })),
                tool_choice: 'auto' as const,
              }
            : {}),
          stream: false,
        });
      } catch (err) {
        throw asModelFailure(err);
      }
      return readAnswer(res);
    },
  };
}

function asModelFailure(err: unknown): ModelCallFailed {
  if (err instanceof OpenAI.APIConnectionTimeoutError) return new ModelCallFailed('the model did not answer in time', true);
  if (err instanceof OpenAI.APIConnectionError) return new ModelCallFailed(`the model could not be reached: ${err.message}`, true);
  if (err instanceof OpenAI.APIError) {
    const status = err.status ?? null;
    const retryable = status === null || status === 408 || status === 409 || status === 429 || status >= 500;
    return new ModelCallFailed(`the model answered ${status ?? 'an error'}: ${err.message}`, retryable, status);
  }
  // The body was no JSON, or the client could not read it: the model's output, not a passing failure.
  return new ModelCallFailed(`the model's answer could not be read: ${err instanceof Error ? err.message : String(err)}`, false);
}

/** The turn as the run reads it; a body that is no chat completion is refused here, not deeper in. */
function readAnswer(res: unknown): ChatModelAnswer {
  const r = res as Partial<OpenAI.Chat.Completions.ChatCompletion> | null;
  const choice = Array.isArray(r?.choices) ? r.choices[0] : undefined;
  const message = choice?.message;
  if (!message || typeof message !== 'object') throw new ModelCallFailed('the model answered no message (no choices[0].message)', false);
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const toolCalls = calls.map((call, i) => {
    const fn = (call as { function?: { name?: unknown; arguments?: unknown } }).function;
    if (!fn || typeof fn.name !== 'string' || fn.name === '') throw new ModelCallFailed(`tool call ${i} names no function`, false);
    return { id: typeof call.id === 'string' && call.id ? call.id : `call_${i}`, name: fn.name, arguments: fn.arguments };
  });
  if (typeof message.content !== 'string' && message.content !== null && message.content !== undefined)
    throw new ModelCallFailed('the message content is neither text nor null', false);
  if (toolCalls.length === 0 && typeof message.content !== 'string')
    throw new ModelCallFailed('the model answered neither text nor tool calls', false);
  const usage = r?.usage;
  return {
    content: message.content ?? null,
    toolCalls,
    finishReason: choice?.finish_reason ?? null,
    usage: { promptTokens: Number(usage?.prompt_tokens ?? 0) || 0, completionTokens: Number(usage?.completion_tokens ?? 0) || 0 },
  };
}
