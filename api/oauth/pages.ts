import crypto from 'node:crypto';
import { CAPABILITY_SCOPES, ELEVATION_SCOPES, PRE_TICKED_SCOPES, SCOPE_WORDS } from '../../domain/oauth/index.js';

// The authorization server's pages: sign-in, choosing an account, consent, an invitation's
// password form and the messages between them. Server-rendered HTML with its style inline (no
// script, nothing loaded from anywhere: they work without the internet), laid out for a phone first.
// Every form carries the CSRF field (api/oauth/csrf.ts). Text from a client or a person is escaped.

export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const CSS = `
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:#f3f4f6;color:#111827;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:32rem;margin:0 auto;padding:1rem}
.card{background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.12);padding:1.25rem;margin:0 0 1rem}
h1{font-size:1.35rem;line-height:1.3;margin:0 0 .75rem}
h2{font-size:1rem;margin:1.25rem 0 .5rem}
p{margin:.5rem 0}
.muted{color:#4b5563;font-size:.9rem}
.who{display:grid;grid-template-columns:auto 1fr;gap:.25rem .75rem;margin:.75rem 0;font-size:.95rem}
.who dt{color:#4b5563}
.who dd{margin:0;overflow-wrap:anywhere}
label.field{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=email],input[type=password]{width:100%;font-size:16px;padding:.7rem .75rem;border:1px solid #9ca3af;border-radius:8px;background:#fff}
input:focus,button:focus{outline:3px solid #93c5fd;outline-offset:1px}
.error{background:#fef2f2;color:#991b1b;border:1px solid #fecaca;border-radius:8px;padding:.6rem .75rem;margin:.75rem 0}
.scopes{list-style:none;margin:0;padding:0}
.scopes li{border-top:1px solid #e5e7eb}
.scopes li:first-child{border-top:0}
.scopes label{display:flex;gap:.75rem;align-items:flex-start;padding:.6rem .25rem;cursor:pointer}
.scopes input{width:1.25rem;height:1.25rem;margin:.15rem 0 0;flex:none}
.scopes strong{display:block}
.scopes span{display:block;color:#4b5563;font-size:.9rem}
.tag{display:inline-block;font-size:.75rem;font-weight:600;color:#1e40af;background:#dbeafe;border-radius:999px;padding:0 .5rem;margin-left:.35rem;vertical-align:middle}
.warn{background:#fffbeb;border:1px solid #fde68a;border-radius:8px;padding:.5rem .75rem;font-size:.9rem;color:#78350f}
.actions{display:flex;gap:.75rem;flex-wrap:wrap;margin-top:1.25rem}
button{font:inherit;font-weight:600;border-radius:8px;padding:.75rem 1.25rem;min-height:44px;cursor:pointer;border:1px solid transparent;flex:1 1 8rem}
button.primary{background:#1d4ed8;color:#fff}
button.secondary{background:#fff;color:#111827;border-color:#9ca3af}
.accounts button{display:block;width:100%;text-align:left;margin:.5rem 0;background:#fff;border-color:#9ca3af;color:#111827}
`;

const STYLE_HASH = `'sha256-${crypto.createHash('sha256').update(CSS).digest('base64')}'`;

/**
 * The headers of every page: no script at all, the one stylesheet by its hash, no framing (a consent
 * page inside another site's frame could be clicked through), forms only to this origin and to where
 * the flow goes next (`formTargets`: the client's redirect, which a form's redirect chain reaches).
 */
export function pageHeaders(formTargets: readonly string[] = []): Record<string, string> {
  return {
    'Content-Security-Policy': [
      "default-src 'none'",
      `style-src ${STYLE_HASH}`,
      `form-action 'self'${formTargets.map((t) => ` ${t}`).join('')}`,
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join('; '),
    'X-Frame-Options': 'DENY',
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
  };
}

/** A CSP source for where a redirect URI points: its origin, or its scheme for an app's own scheme. */
export function formTargetOf(redirectUri: string | undefined): string[] {
  if (!redirectUri) return [];
  try {
    const url = new URL(redirectUri);
    if (url.protocol === 'http:' || url.protocol === 'https:') return [url.origin];
    return /^[a-z][a-z0-9+.-]*:$/i.test(url.protocol) ? [url.protocol] : [];
  } catch {
    return [];
  }
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

const errorBox = (error: string | undefined) => (error ? `<div class="error" role="alert" id="error">${escapeHtml(error)}</div>` : '');
const csrfField = (csrf: string) => `<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">`;

/** Who is asking: the client's name and the host its answer goes to. */
export interface ClientView {
  name: string;
  redirectHost: string;
}

const clientLine = (c: ClientView) =>
  `<dl class="who"><dt>App</dt><dd id="client-name">${escapeHtml(c.name)}</dd><dt>Returns to</dt><dd id="redirect-host">${escapeHtml(c.redirectHost)}</dd></dl>`;

export function signInPage(v: { client: ClientView; action: string; csrf: string; email?: string; error?: string }): string {
  return layout(
    'Sign in',
    `<div class="card">
<h1>Sign in to connect ${escapeHtml(v.client.name)}</h1>
${clientLine(v.client)}
${errorBox(v.error)}
<form method="post" action="${escapeHtml(v.action)}" id="sign-in">
${csrfField(v.csrf)}
<label class="field" for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${escapeHtml(v.email ?? '')}">
<label class="field" for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024">
<div class="actions"><button class="primary" type="submit" id="sign-in-button">Sign in</button></div>
</form>
<p class="muted">No password yet? Ask your administrator for an invitation link.</p>
</div>`,
  );
}

export function chooseAccountPage(v: {
  client: ClientView;
  action: string;
  csrf: string;
  accounts: readonly { subject: string; accountName: string; personName: string }[];
}): string {
  const buttons = v.accounts
    .map(
      (a) =>
        `<button type="submit" name="subject" value="${escapeHtml(a.subject)}">${escapeHtml(a.accountName)}<span class="muted"> · ${escapeHtml(a.personName)}</span></button>`,
    )
    .join('\n');
  return layout(
    'Choose an account',
    `<div class="card">
<h1>Which account should ${escapeHtml(v.client.name)} use?</h1>
<p class="muted">You can sign in to several accounts. Choose the one this app may act for.</p>
<form method="post" action="${escapeHtml(v.action)}" class="accounts" id="choose-account">
${csrfField(v.csrf)}
${buttons}
</form>
</div>`,
  );
}

export interface ConsentView {
  client: ClientView;
  action: string;
  csrf: string;
  accountName: string;
  personName: string;
  personEmail: string;
  /** The MCP endpoints the connection is for (paths). */
  resources: readonly string[];
  /** Scopes the client named itself: marked, never ticked for it. */
  requested: ReadonlySet<string>;
}

function scopeItem(scope: string, checked: boolean, requested: boolean): string {
  const words = SCOPE_WORDS[scope as keyof typeof SCOPE_WORDS];
  const id = `scope-${scope.slice(4)}`;
  return `<li><label for="${id}"><input type="checkbox" name="scope" value="${escapeHtml(scope)}" id="${id}"${checked ? ' checked' : ''}><span><strong>${escapeHtml(words.title)}${requested ? '<em class="tag">asked for</em>' : ''}</strong><span>${escapeHtml(words.line)}</span></span></label></li>`;
}

/**
 * The consent page: who asks (the client and where it returns), for which account and person, and
 * the scopes. Capability scopes are ticked exactly as the contract pre-ticks them; elevation scopes
 * are never ticked, whoever asked for them. Allow and Deny submit the same form.
 */
export function consentPage(v: ConsentView): string {
  const pre = new Set<string>(PRE_TICKED_SCOPES);
  const capabilities = CAPABILITY_SCOPES.map((s) => scopeItem(s, pre.has(s), v.requested.has(s))).join('\n');
  const elevations = ELEVATION_SCOPES.map((s) => scopeItem(s, false, v.requested.has(s))).join('\n');
  return layout(
    `Allow ${v.client.name}?`,
    `<form method="post" action="${escapeHtml(v.action)}" id="consent">
${csrfField(v.csrf)}
<div class="card">
<h1>Allow <span id="heading-client">${escapeHtml(v.client.name)}</span> to use your account?</h1>
${clientLine(v.client)}
<dl class="who"><dt>Account</dt><dd id="account-name">${escapeHtml(v.accountName)}</dd><dt>You</dt><dd id="person">${escapeHtml(v.personName)} (${escapeHtml(v.personEmail)})</dd><dt>Connects to</dt><dd id="resources">${v.resources.map(escapeHtml).join(', ')}</dd></dl>
<p class="muted">It can never do more than you can do yourself in this account.</p>
</div>
<div class="card">
<h2>Which parts of the business</h2>
<ul class="scopes" id="capabilities">
${capabilities}
</ul>
</div>
<div class="card">
<h2>What it may do beyond reading</h2>
<p class="warn">Each of these lets the app act for you in every part you allowed above.</p>
<ul class="scopes" id="elevations">
${elevations}
</ul>
<div class="actions">
<button class="primary" type="submit" name="decision" value="approve" id="approve">Allow</button>
<button class="secondary" type="submit" name="decision" value="deny" id="deny">Deny</button>
</div>
</div>
</form>`,
  );
}

export function invitePage(v: {
  personName: string;
  email: string;
  accountName: string;
  action: string;
  csrf: string;
  error?: string;
}): string {
  return layout(
    'Set your password',
    `<div class="card">
<h1>Set your password</h1>
<dl class="who"><dt>Account</dt><dd>${escapeHtml(v.accountName)}</dd><dt>You</dt><dd>${escapeHtml(v.personName)} (${escapeHtml(v.email)})</dd></dl>
${errorBox(v.error)}
<form method="post" action="${escapeHtml(v.action)}" id="set-password">
${csrfField(v.csrf)}
<input type="hidden" name="email" autocomplete="username" value="${escapeHtml(v.email)}">
<label class="field" for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="12" maxlength="256">
<label class="field" for="confirm">Type it again</label>
<input id="confirm" name="confirm" type="password" autocomplete="new-password" required minlength="12" maxlength="256">
<p class="muted">At least 12 characters. A few unrelated words make a good one.</p>
<div class="actions"><button class="primary" type="submit" id="save-password">Save password</button></div>
</form>
</div>`,
  );
}

/** A page that only says something: an expired link, a refusal, a success. */
export function messagePage(title: string, text: string): string {
  return layout(title, `<div class="card"><h1 id="title">${escapeHtml(title)}</h1><p id="message">${escapeHtml(text)}</p></div>`);
}
