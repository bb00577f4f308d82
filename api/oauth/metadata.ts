import type Router from '@koa/router';
import type Koa from 'koa';
import { MCP_SERVERS } from '../operation.js';
import { HttpError } from '../http/errors.js';
import { MCP_SCOPES, PROTECTED_RESOURCE_WELL_KNOWN, mcpPath, resourceUrl, trimBase } from '../../domain/oauth/index.js';

// RFC 9728 protected-resource metadata of each MCP endpoint, at the path the MCP authorization
// spec's discovery reads first (the well-known path inserted before the endpoint's own path), and
// pointed to by every 401 of the MCP door (WWW-Authenticate resource_metadata). Its `resource` is
// the endpoint's URL exactly, which is also the audience of a token issued for it.

/** The metadata document of one endpoint (`server` null: /mcp). */
export function protectedResourceMetadata(publicBaseUrl: string, server: string | null) {
  const base = trimBase(publicBaseUrl);
  return {
    resource: resourceUrl(base, server),
    authorization_servers: [base],
    scopes_supported: [...MCP_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: server === null ? 'MCP: every server' : `MCP server ${server}`,
    resource_documentation: `${base}/api-docs/mcp.json`,
  };
}

export function mountProtectedResourceMetadata(router: Router, publicBaseUrl: string): void {
  const answer = (ctx: Koa.Context, server: string | null) => {
    ctx.state.route = `GET ${PROTECTED_RESOURCE_WELL_KNOWN}${server === null ? '/mcp' : '/mcp/v1/{server}'}`;
    // Public metadata: any origin may read it (a browser-based client discovers with it).
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = protectedResourceMetadata(publicBaseUrl, server);
  };
  router.get(`${PROTECTED_RESOURCE_WELL_KNOWN}${mcpPath(null)}`, (ctx) => answer(ctx, null));
  router.get(`${PROTECTED_RESOURCE_WELL_KNOWN}/mcp/v1/:server`, (ctx) => {
    const key = ctx.params.server;
    if (!(MCP_SERVERS as readonly string[]).includes(key)) {
      ctx.state.route = `GET ${PROTECTED_RESOURCE_WELL_KNOWN}/mcp/v1/{server}`;
      throw new HttpError(404, `There is no MCP server named ${key}.`);
    }
    answer(ctx, key);
  });
}
