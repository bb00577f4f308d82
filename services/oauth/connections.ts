import type { OperatorContext } from '../platform/context.js';
import { notFound } from '../platform/errors.js';
import { iso } from '../platform/time.js';
import { SVC_MCP_SCOPES, isMcpScope, scopeWords, type McpScope } from '../../domain/oauth/index.js';
import { listKeys, personById, requireAccount, revokeKey } from '../account/index.js';
import { destroyAccountGrant, grantsOfAccount, type GrantRow } from './store.js';

// An account's MCP connections, as the operator lists and ends them (issue 27, point 4): the OAuth
// grants people made by consenting to an app, and the svc_mcp_ credentials an operator issued, in
// one list. Ending one holds on the next request: a grant's access and refresh tokens are deleted
// with it (the MCP door finds no token), a credential is revoked as any key is.

export type ConnectionKind = 'oauth' | 'svc_mcp';

// A type, not an interface: the operation's answer schema is checked against it (an index signature).
export type McpConnection = {
  id: string;
  kind: ConnectionKind;
  /** The app's registered name (OAuth), or the credential's name. */
  name: string;
  /** The OAuth client's id; null for a credential. */
  client_id: string | null;
  /** The person it acts as: who consented, or who the credential was issued for. */
  person: { id: number; name: string; email: string; active: boolean } | null;
  /** What it may do, before the person's permissions bound it: the grant's scopes, or every MCP scope for a credential. */
  scopes: McpScope[];
  /** The MCP endpoints (URLs) the grant's tokens open; null for a credential, which opens every one. */
  resources: string[] | null;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
};

const OAUTH = 'oauth_';
const CREDENTIAL = 'credential_';
/** oidc-provider's grant ids: 21 characters of nanoid's alphabet (longer accepted, never more than a stored id). */
const GRANT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const KEY_ID = /^[1-9][0-9]{0,15}$/;

/** A connection id read back: a malformed one names nothing, so it is not found like another account's. */
function parseConnectionId(id: string): { kind: 'oauth'; grantId: string } | { kind: 'svc_mcp'; keyId: number } | null {
  if (id.startsWith(OAUTH) && GRANT_ID.test(id.slice(OAUTH.length))) return { kind: 'oauth', grantId: id.slice(OAUTH.length) };
  if (id.startsWith(CREDENTIAL) && KEY_ID.test(id.slice(CREDENTIAL.length)))
    return { kind: 'svc_mcp', keyId: Number(id.slice(CREDENTIAL.length)) };
  return null;
}

type Person = McpConnection['person'];

async function peopleOf(oc: OperatorContext, accountId: number, userIds: readonly (number | null)[]): Promise<Map<number, Person>> {
  const people = new Map<number, Person>();
  for (const id of new Set(userIds.filter((u): u is number => u !== null))) {
    const p = await personById(oc.em, accountId, id);
    people.set(id, p ? { id: p.id, name: p.name, email: p.email, active: p.active } : null);
  }
  return people;
}

/** The scopes a grant holds: those of its resources (one per endpoint it was consented for), each once. */
function grantScopes(payload: Record<string, unknown>): { scopes: McpScope[]; resources: string[] } {
  const resources = (payload.resources ?? {}) as Record<string, unknown>;
  const scopes = new Set<McpScope>();
  for (const scope of Object.values(resources))
    for (const s of scopeWords(typeof scope === 'string' ? scope : '')) if (isMcpScope(s)) scopes.add(s);
  return { scopes: [...scopes], resources: Object.keys(resources) };
}

function grantView(g: GrantRow, people: Map<number, Person>): McpConnection {
  const { scopes, resources } = grantScopes(g.payload);
  return {
    id: `${OAUTH}${g.grant_id}`,
    kind: 'oauth',
    name: g.client_name?.trim() || (g.client_id ?? 'An app'),
    client_id: g.client_id,
    person: g.user_id === null ? null : (people.get(g.user_id) ?? null),
    scopes,
    resources,
    created_at: iso(g.created_at),
    last_used_at: iso(g.last_used_at),
    expires_at: iso(g.expires_at),
  };
}

type KeyView = Awaited<ReturnType<typeof listKeys>>[number];

function credentialView(k: KeyView, people: Map<number, Person>): McpConnection {
  return {
    id: `${CREDENTIAL}${k.id}`,
    kind: 'svc_mcp',
    name: k.name,
    client_id: null,
    person: k.user_id === null ? null : (people.get(k.user_id) ?? null),
    scopes: [...SVC_MCP_SCOPES],
    resources: null,
    created_at: k.created_at!,
    last_used_at: k.last_used_at,
    expires_at: k.expires_at,
  };
}

const live = (k: KeyView, now: number) => k.revoked_at === null && (k.expires_at === null || Date.parse(k.expires_at) > now);

/** The account's live MCP connections, newest first: OAuth grants with a live token, unrevoked unexpired credentials. */
export async function listConnections(oc: OperatorContext, accountId: number): Promise<McpConnection[]> {
  await requireAccount(oc, accountId);
  const now = Date.now();
  const grants = await grantsOfAccount(oc.em, accountId);
  const credentials = (await listKeys(oc, accountId, 'mcp')).filter((k) => live(k, now));
  const people = await peopleOf(oc, accountId, [...grants.map((g) => g.user_id), ...credentials.map((k) => k.user_id)]);
  return [...grants.map((g) => grantView(g, people)), ...credentials.map((k) => credentialView(k, people))].sort(
    (a, b) => Date.parse(b.created_at) - Date.parse(a.created_at) || a.id.localeCompare(b.id),
  );
}

/**
 * Ends one connection of the account, answered as it was: an OAuth grant with every code, access
 * and refresh token issued under it, or a credential revoked. Another account's connection, one
 * already ended and an id that names none are all not found.
 */
export async function revokeConnection(oc: OperatorContext, accountId: number, connectionId: string): Promise<McpConnection> {
  await requireAccount(oc, accountId);
  const ref = parseConnectionId(connectionId);
  if (!ref) throw notFound('MCP connection');
  if (ref.kind === 'oauth') {
    const [grant] = await grantsOfAccount(oc.em, accountId, ref.grantId);
    if (!grant) throw notFound('MCP connection');
    const view = grantView(grant, await peopleOf(oc, accountId, [grant.user_id]));
    await destroyAccountGrant(oc.em, accountId, ref.grantId);
    oc.log.info({ actor: 'operator', account: accountId, connection: view.id, client: grant.client_id }, 'mcp connection revoked');
    return view;
  }
  const key = (await listKeys(oc, accountId, 'mcp')).find((k) => k.id === ref.keyId);
  if (!key || !live(key, Date.now())) throw notFound('MCP connection');
  const revoked = await revokeKey(oc, accountId, 'mcp', ref.keyId);
  return { ...credentialView(revoked, await peopleOf(oc, accountId, [revoked.user_id])), expires_at: revoked.expires_at };
}
