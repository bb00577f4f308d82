import { createHash } from 'node:crypto';
import { buildOpenApi } from './openapi.js';
import type { RouteDef } from './registry.js';

const escape = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

const STYLE =
  'body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em}code,pre{background:#f4f4f4;padding:2px 4px}pre{padding:8px;overflow:auto}section{border-top:1px solid #ddd;margin-top:1em}';

/**
 * The page's policy: its one inline style (allowed by its hash, so no other inline style would be)
 * and nothing else: no script, image, font, frame or form. Route text is escaped already; this is
 * the second line should that ever slip.
 */
const PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** A plain, dependency-free reference page: one section per tag, each route with its request schema. */
function referencePage(routes: RouteDef[]): string {
  const byTag = new Map<string, RouteDef[]>();
  for (const r of routes) (byTag.get(r.tag) ?? byTag.set(r.tag, []).get(r.tag)!).push(r);
  const sections = [...byTag]
    .map(
      ([tag, rs]) =>
        `<h2>${escape(tag)}</h2>` +
        rs
          .map(
            (r) => `
    <section><h3><code>${r.method} ${escape(r.path)}</code></h3><p>${escape(r.summary)}</p>
    ${r.description ? `<p>${escape(r.description)}</p>` : ''}
    <p>Auth: ${r.auth}${r.permission ? `, permission <code>${escape(r.permission)}</code>` : ''}. Success: ${r.response.status}.</p>
    ${r.body ? `<details><summary>Request body schema</summary><pre>${escape(JSON.stringify(r.body, null, 2))}</pre></details>` : ''}
    ${r.query && Object.keys((r.query.properties ?? {}) as object).length ? `<details><summary>Query</summary><pre>${escape(JSON.stringify(r.query, null, 2))}</pre></details>` : ''}
    </section>`,
          )
          .join(''),
    )
    .join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>API reference 3.1.0</title>
<style>${STYLE}</style>
</head><body><h1>Business Messaging, Commerce and Data API</h1><p>Reference 3.1.0 · machine-readable: <a href="/api-docs/openapi.json">OpenAPI 3.1.0 (3.6.0)</a></p>${sections}</body></html>`;
}

/** The customer document and page describe every route but the operator ones, which have their own document. */
export function docsRoutes(routes: RouteDef[]): RouteDef[] {
  const customer = routes.filter((r) => r.auth !== 'operator');
  const doc = buildOpenApi(customer);
  const operatorDoc = buildOpenApi(
    routes.filter((r) => r.auth === 'operator'),
    'operator',
  );
  const page = referencePage(customer);
  return [
    {
      method: 'GET',
      path: '/admin/v1/openapi.json',
      tag: 'Documentation',
      summary: 'OpenAPI 3.1.0 document of the operator API',
      auth: 'public',
      operatorSurface: true,
      query: { type: 'object' },
      response: { status: 200, description: 'OpenAPI document', schema: { type: 'object' } },
      handler: async () => ({ body: operatorDoc }),
    },
    {
      method: 'GET',
      path: '/api-docs/openapi.json',
      tag: 'Documentation',
      summary: 'OpenAPI 3.1.0 document',
      auth: 'public',
      query: { type: 'object' },
      response: { status: 200, description: 'OpenAPI document', schema: { type: 'object' } },
      handler: async () => ({ body: doc }),
    },
    {
      method: 'GET',
      path: '/api-docs',
      tag: 'Documentation',
      summary: 'Readable API reference',
      auth: 'public',
      query: { type: 'object' },
      response: { status: 200, description: 'HTML page', schema: { type: 'string' } },
      handler: async ({ ctx }) => {
        ctx.type = 'html';
        return { body: page, headers: { 'Content-Security-Policy': PAGE_CSP } };
      },
    },
  ];
}
