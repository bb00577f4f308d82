import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type Koa from 'koa';
import { notFound } from '../../services/platform/errors.js';
import { OPERATOR_INTRODUCTION, customerIntroduction } from './docs-intro.js';
import { buildOpenApi } from './openapi.js';
import type { RouteDef } from './registry.js';

// The reference pages are drawn by Scalar's standalone browser bundle, served by this API (no CDN:
// the pages work offline and load nothing from anyone else): /api-docs over the customer document,
// /admin/v1/api-docs over the operator one, on the operator surface (its own address when
// OPERATOR_PORT is set), each loading the bundle from its own origin.

/**
 * The bundle: from the dev dependency when it is installed (a checkout), else the copy the image
 * keeps (.build/api-reference, made by scripts/reference-bundle.mjs in the Dockerfile), so the
 * production image carries one file instead of the package and its framework.
 */
function findRenderer(): { file: string; version: string } | null {
  try {
    // Its exports name no package.json: the package root is found from its main entry (dist/index.js).
    const dir = path.resolve(path.dirname(createRequire(import.meta.url).resolve('@scalar/api-reference')), '..');
    const { version } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string };
    return { file: path.join(dir, 'dist', 'browser', 'standalone.js'), version };
  } catch {
    const shipped = path.resolve(import.meta.dirname, '..', '..', '.build', 'api-reference');
    if (!fs.existsSync(path.join(shipped, 'standalone.js'))) return null;
    return { file: path.join(shipped, 'standalone.js'), version: fs.readFileSync(path.join(shipped, 'version'), 'utf8').trim() };
  }
}
const RENDERER = findRenderer();

/** A reference page: its address, its document's, and the bundle's (the version in the URL, so a year-long cache is never stale). */
interface ReferencePage {
  path: string;
  document: string;
  title: string;
}
const CUSTOMER_PAGE: ReferencePage = { path: '/api-docs', document: '/api-docs/openapi.json', title: 'API reference' };
const OPERATOR_PAGE: ReferencePage = { path: '/admin/v1/api-docs', document: '/admin/v1/openapi.json', title: 'Operator API reference' };
const bundleUrl = (page: ReferencePage) => `${page.path}/scalar.js?v=${RENDERER?.version ?? 'missing'}`;

// Telemetry, the AI agent, the MCP panel and the web fonts would each call scalar.com; the policy
// below would refuse them anyway, so they are turned off rather than left failing in the console.
const initOf = (page: ReferencePage) =>
  `Scalar.createApiReference('#app', ${JSON.stringify({
    url: page.document,
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
const policyOf = (init: string) =>
  [
    "default-src 'none'",
    `script-src 'self' 'sha256-${createHash('sha256').update(init).digest('base64')}'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');

const htmlOf = (page: ReferencePage, init: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · Business Messaging, Commerce and Data API</title><link rel="icon" href="data:,"></head>
<body><noscript><p>This reference is drawn by JavaScript. The document it shows: <a href="${page.document}">OpenAPI 3.1</a>.</p></noscript>
<div id="app"></div>
<script src="${bundleUrl(page)}"></script>
<script>${init}</script>
</body></html>
`;

/** The bundle gzipped (4.3 MB → about 1.1 MB), made once on the first request that accepts it. */
let gzipped: Promise<Buffer> | null = null;
const gzipOnce = (file: string) => {
  gzipped ??= fs.promises.readFile(file).then((raw) => promisify(zlib.gzip)(raw));
  gzipped.catch(() => (gzipped = null));
  return gzipped;
};

async function bundle(ctx: Koa.Context) {
  if (!RENDERER) throw notFound('The reference renderer (@scalar/api-reference)');
  ctx.type = 'text/javascript; charset=utf-8';
  const headers: Record<string, string> = { 'Cache-Control': 'public, max-age=31536000, immutable', Vary: 'Accept-Encoding' };
  if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip')
    return { body: await gzipOnce(RENDERER.file), headers: { ...headers, 'Content-Encoding': 'gzip' } };
  return { body: fs.createReadStream(RENDERER.file), headers };
}

/** A reference page and its bundle's route. */
function pageRoutes(page: ReferencePage, summary: string, operatorSurface: boolean): RouteDef[] {
  const init = initOf(page);
  const html = htmlOf(page, init);
  const policy = policyOf(init);
  const common = {
    tag: 'Documentation',
    auth: 'public',
    query: { type: 'object' },
    ...(operatorSurface ? { operatorSurface } : {}),
  } as const;
  return [
    {
      ...common,
      method: 'GET',
      path: page.path,
      summary,
      response: { status: 200, description: 'HTML page', schema: { type: 'string' } },
      handler: async ({ ctx }) => {
        ctx.type = 'html';
        return { body: html, headers: { 'Content-Security-Policy': policy } };
      },
    },
    {
      ...common,
      method: 'GET',
      path: `${page.path}/scalar.js`,
      summary: "The reference page's renderer: @scalar/api-reference's standalone bundle",
      response: { status: 200, description: 'JavaScript', schema: { type: 'string' } },
      handler: async ({ ctx }) => bundle(ctx),
    },
  ];
}

/**
 * The customer document and page describe every route but the operator ones; the operator API has
 * a document and a page of its own. `rateLimit` (requests a minute per key) is stated in the introduction.
 */
export function docsRoutes(routes: RouteDef[], rateLimit: number): RouteDef[] {
  const doc = buildOpenApi(
    routes.filter((r) => r.auth !== 'operator'),
    'customer',
    customerIntroduction(rateLimit),
  );
  const operatorDoc = buildOpenApi(
    routes.filter((r) => r.auth === 'operator'),
    'operator',
    OPERATOR_INTRODUCTION,
  );
  return [
    {
      method: 'GET',
      path: OPERATOR_PAGE.document,
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
      path: CUSTOMER_PAGE.document,
      tag: 'Documentation',
      summary: 'OpenAPI 3.1.0 document',
      auth: 'public',
      query: { type: 'object' },
      response: { status: 200, description: 'OpenAPI document', schema: { type: 'object' } },
      handler: async () => ({ body: doc }),
    },
    ...pageRoutes(CUSTOMER_PAGE, 'Readable API reference (Scalar) of the customer document', false),
    ...pageRoutes(OPERATOR_PAGE, 'Readable reference (Scalar) of the operator API', true),
  ];
}
