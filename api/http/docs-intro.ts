// The introductions the reference pages open with (OpenAPI `info.description`, Markdown): what a
// developer needs before the first call, beyond what each operation says of itself.

/** The customer document's introduction; `rateLimit` is the deployment's requests per minute per key. */
export function customerIntroduction(rateLimit: number): string {
  return `Send SMS and chat-channel messages, keep contacts and groups, run a shop (catalogues, stock, baskets, orders) and data tables, over one REST API, an MCP server and signed webhooks. Every request sample on this page can be sent as it is once you put in your key and the ids of the path: the bodies shown are ones the API accepts.

## Authentication

Every \`/api/v3\` call carries an account's REST key as a bearer token:

\`\`\`
Authorization: Bearer <your 64-character REST key>
\`\`\`

Keys are issued per account (Settings → API credentials). A key without a live issuer, or whose issuer lacks the operation's permission (named on each operation as \`x-permission\`), is refused with **403**; a missing or wrong key is **401**. A suspended account's keys answer 403.

## Envelopes

A success is \`{"status": "success", "data": …}\`: \`data\` is the resource itself (an SMS record, a contact, an order) or, for lists, the page of items with its paging fields. A refusal is

\`\`\`json
{"status": "error", "message": "The given data was invalid.", "errors": {"recipient": ["The recipient field is required when recipients is not present."]}}
\`\`\`

with \`errors\` naming each field (dotted paths for nested ones) on a **422**, and \`reason\` where the refusal has a machine-readable cause. The data-table endpoints (\`/api/v3/data/…\`) answer in their own envelope: the record or list bare on success, and \`{"error": {"code", "message", "retryable", "field"}}\` on refusal. Every operation lists the statuses it can answer.

## Rate limits

Each key may make **${rateLimit} requests a minute** (a sliding window). Every authenticated answer says where you stand:

| Header | Meaning |
|---|---|
| \`X-RateLimit-Limit\` | requests allowed per minute |
| \`X-RateLimit-Remaining\` | requests left in the current window |

Past the limit the answer is **429** with \`Retry-After\` (seconds) and \`X-RateLimit-Reset\` (Unix seconds); wait that long and retry. Repeated failed authentications from one address are throttled as well.

## Webhooks

Two kinds of callbacks leave the service, both at least once and both signed:

- **Communication callbacks** (\`message.sent\`, \`message.delivered\`, \`message.failed\`, \`message.received\`, \`order.received\`, \`cart.submitted\`, \`product.*\`, \`group.*\`, …) go to the webhook endpoints registered for the account. Each request carries \`webhook-id\` (the event's \`event_id\`, stable across retries: deduplicate on it), \`webhook-timestamp\` and \`webhook-signature\` in the [Standard Webhooks](https://www.standardwebhooks.com/) scheme (verify with any Standard Webhooks library and your \`whsec_…\` secret), and \`X-Signature\`, a hex HMAC-SHA256 of the raw body. A failed delivery is retried after 1 min, 5 min, 30 min, 2 h and 6 h. Answer 2xx quickly; order is not guaranteed, so compare \`occurred_at\`.
- **Automation subscriptions** (the *Automations* group below) deliver business events to the subscribed URL with \`X-Svc-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">\` under the subscription's secret.

## MCP

The same operations are tools of an MCP server (Streamable HTTP, stateless: \`POST\` only, JSON answers). \`POST /mcp\` serves every tool your credential may use; \`POST /mcp/v1/<server>\` serves one server (\`shop\`, \`orders\`, \`groups\`, \`data\`, …). Send \`Authorization: Bearer svc_mcp_<credential>\`. The manifest of servers and tools, with each tool's input and output schema, is at [\`/api-docs/mcp.json\`](/api-docs/mcp.json).

## More

The OpenAPI 3.1 document behind this page: [\`/api-docs/openapi.json\`](/api-docs/openapi.json). The operator API (accounts, keys, webhook endpoints) has a reference of its own, served with the operator API.`;
}

/** The operator document's introduction. */
export const OPERATOR_INTRODUCTION = `The operator API (Settings): accounts, their REST keys and MCP credentials, webhook endpoints and their secrets, automation settings, notices and data settings. It is for the people who run the service, not for account holders, and may listen on an address of its own (\`OPERATOR_PORT\`).

## Authentication

Every call carries the operator token:

\`\`\`
Authorization: Bearer <OPERATOR_TOKEN>
\`\`\`

A missing or wrong token is **401**; repeated failures from one address or for one token are throttled (**429** with \`Retry-After\`). Answers that show a secret (a new key, a webhook secret) show it once.

## Envelopes

As the customer API: \`{"status": "success", "data": …}\`, and \`{"status": "error", "message", "errors"}\` on refusal. Most operations are also commands of the admin CLI (\`npm run admin\`), named on each operation as \`x-cli\`.

The OpenAPI 3.1 document behind this page: [\`/admin/v1/openapi.json\`](/admin/v1/openapi.json).`;
