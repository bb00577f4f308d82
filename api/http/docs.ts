import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type Koa from 'koa';
import { buildOpenApi } from './openapi.js';
import type { RouteDef } from './registry.js';

// The reference page at /api-docs is drawn by Scalar's standalone browser bundle, served by this API
// from node_modules (no CDN: the page works offline and loads nothing from anyone else), over the
// customer document. The operator API has its own document and no page.

// Its exports name no package.json: the package root is found from its main entry (dist/index.js).
const scalarDir = path.resolve(path.dirname(createRequire(import.meta.url).resolve('@scalar/api-reference')), '..');
const BUNDLE = path.join(scalarDir, 'dist', 'browser', 'standalone.js');
const SCALAR_VERSION = (JSON.parse(fs.readFileSync(path.join(scalarDir, 'package.json'), 'utf8')) as { version: string }).version;
/** The version in the URL, so a year-long cache is never stale after an upgrade. */
const BUNDLE_URL = `/api-docs/scalar.js?v=${SCALAR_VERSION}`;
const DOCUMENT_URL = '/api-docs/openapi.json';

// Telemetry, the AI agent, the MCP panel and the web fonts would each call scalar.com; the policy
// below would refuse them anyway, so they are turned off rather than left failing in the console.
const INIT = `Scalar.createApiReference('#app', ${JSON.stringify({
  url: DOCUMENT_URL,
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
})});`;

/**
 * Scripts: the bundle from this origin and the one inline call, by its hash; requests (the document,
 * and the page's "test request") to this origin only. Styles may be inline: the bundle writes its
 * stylesheet into <style> elements, some of them without a nonce, and styles run no code.
 */
const PAGE_CSP = [
  "default-src 'none'",
  `script-src 'self' 'sha256-${createHash('sha256').update(INIT).digest('base64')}'`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Business Messaging, Commerce and Data API</title><link rel="icon" href="data:,"></head>
<body><noscript><p>This reference is drawn by JavaScript. The document it shows: <a href="${DOCUMENT_URL}">OpenAPI 3.1</a>.</p></noscript>
<div id="app"></div>
<script src="${BUNDLE_URL}"></script>
<script>${INIT}</script>
</body></html>
`;

/** The bundle gzipped (4.3 MB → about 1.1 MB), made once on the first request that accepts it. */
let gzipped: Promise<Buffer> | null = null;
const gzipOnce = () => {
  gzipped ??= fs.promises.readFile(BUNDLE).then((raw) => promisify(zlib.gzip)(raw));
  gzipped.catch(() => (gzipped = null));
  return gzipped;
};

async function bundle(ctx: Koa.Context) {
  ctx.type = 'text/javascript; charset=utf-8';
  const headers: Record<string, string> = { 'Cache-Control': 'public, max-age=31536000, immutable', Vary: 'Accept-Encoding' };
  if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip')
    return { body: await gzipOnce(), headers: { ...headers, 'Content-Encoding': 'gzip' } };
  return { body: fs.createReadStream(BUNDLE), headers };
}

/** The customer document and page describe every route but the operator ones, which have their own document. */
export function docsRoutes(routes: RouteDef[]): RouteDef[] {
  const customer = routes.filter((r) => r.auth !== 'operator');
  const doc = buildOpenApi(customer);
  const operatorDoc = buildOpenApi(
    routes.filter((r) => r.auth === 'operator'),
    'operator',
  );
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
      summary: 'Readable API reference (Scalar) of the customer document',
      auth: 'public',
      query: { type: 'object' },
      response: { status: 200, description: 'HTML page', schema: { type: 'string' } },
      handler: async ({ ctx }) => {
        ctx.type = 'html';
        return { body: PAGE, headers: { 'Content-Security-Policy': PAGE_CSP } };
      },
    },
    {
      method: 'GET',
      path: '/api-docs/scalar.js',
      tag: 'Documentation',
      summary: "The reference page's renderer: @scalar/api-reference's standalone bundle",
      auth: 'public',
      query: { type: 'object' },
      response: { status: 200, description: 'JavaScript', schema: { type: 'string' } },
      handler: async ({ ctx }) => bundle(ctx),
    },
  ];
}
