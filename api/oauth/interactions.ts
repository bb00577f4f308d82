import type Koa from 'koa';
import type Router from '@koa/router';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';
import type { OperationDeps } from '../operation.js';
import { HttpError } from '../http/errors.js';
import { bodyText, mediaTypeOf, readRawBody } from '../http/body.js';
import { grantFromTicks, parseSubject, resourceUrl, scopeWords, subjectOf, trimBase } from '../../domain/oauth/index.js';
import { personById, type PersonRow } from '../../services/account/index.js';
import { peopleSigningIn } from '../../services/oauth/index.js';
import { CLIENT_SCOPE_PARAM, INTERACTION_PATH } from './provider.js';
import { csrfToken, csrfValid } from './csrf.js';
import { chooseAccountPage, consentPage, formTargetOf, messagePage, pageHeaders, signInPage, type ClientView } from './pages.js';
import type { OAuthThrottles } from './throttles.js';

// The interaction pages the provider sends a browser to (INTERACTION_PATH/<uid>): sign-in when the
// browser has no session, then consent. Each reads its interaction through the provider (its cookie
// must be the browser's and the interaction not expired), checks the form's CSRF field, and hands
// the result back to the provider, which continues the authorization (api/oauth/provider.ts).

/** A form of these pages is never near this (an email, a password, 34 scope names). */
const FORM_BYTES = 8 * 1024;
const MAX_PASSWORD = 1024;
const SIGN_IN_FAILED = 'That email and password do not match an account that can sign in here.';

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;
type ClientRecord = NonNullable<Awaited<ReturnType<Provider['Client']['find']>>>;

/** A page that ends this interaction with a message: an expired link, a forged or stale form. */
class PageRefusal extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly text: string,
  ) {
    super(text);
  }
}
const expired = () =>
  new PageRefusal(
    400,
    'This sign-in has expired',
    'It took too long, or it was opened in another browser. Go back to the app and connect again.',
  );
const staleForm = () => new PageRefusal(403, 'This form has expired', 'Reload the page and try again.');

/** The client as the pages name it: its registered name, and where its answer goes. */
export function clientView(client: ClientRecord, redirectUri: unknown): ClientView {
  const name = typeof client.clientName === 'string' && client.clientName.trim() ? client.clientName.trim() : `An app (${client.clientId})`;
  let redirectHost = '';
  if (typeof redirectUri === 'string') {
    try {
      const url = new URL(redirectUri);
      redirectHost = url.host || url.protocol;
    } catch {
      redirectHost = redirectUri;
    }
  }
  return { name, redirectHost };
}

/** A posted form: 415 unless it is a form, 413 past FORM_BYTES. */
async function readForm(ctx: Koa.Context): Promise<URLSearchParams> {
  if (mediaTypeOf(ctx.get('content-type')) !== 'application/x-www-form-urlencoded')
    throw new HttpError(415, 'Send the form as a browser does.');
  return new URLSearchParams(bodyText(await readRawBody(ctx, FORM_BYTES)));
}

function html(ctx: Koa.Context, status: number, body: string, formTargets: readonly string[] = []): void {
  for (const [k, v] of Object.entries(pageHeaders(formTargets))) ctx.set(k, v);
  ctx.type = 'html';
  ctx.status = status;
  ctx.body = body;
}

function seeOther(ctx: Koa.Context, to: string): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.status = 303;
  ctx.set('Location', to);
  ctx.body = '';
}

export function mountInteractions(router: Router, deps: OperationDeps, provider: Provider, throttles: OAuthThrottles): void {
  const { config, orm } = deps;
  const issuer = trimBase(config.publicBaseUrl);
  const em = () => orm.em.fork();
  const purpose = (details: Details) => `interaction:${details.uid}`;
  const action = (details: Details, step: string) => `${INTERACTION_PATH}/${details.uid}/${step}`;

  /** The interaction of this browser at this address, its client and the client's view; refusals as pages. */
  async function load(ctx: Koa.Context, step?: 'login' | 'consent') {
    let details: Details;
    try {
      details = await provider.interactionDetails(ctx.req, ctx.res);
    } catch (err) {
      if (err instanceof errors.SessionNotFound) throw expired();
      throw err;
    }
    if (details.uid !== ctx.params.uid) throw expired();
    if (step && details.prompt.name !== step) throw new PageRefusal(409, 'This step is done', 'Go back to the app and connect again.');
    const client = await provider.Client.find(String(details.params.client_id));
    if (!client) throw expired();
    const redirectUri = details.params.redirect_uri;
    return {
      details,
      client,
      view: clientView(client, redirectUri),
      targets: formTargetOf(typeof redirectUri === 'string' ? redirectUri : undefined),
    };
  }

  /** Runs a page handler; its refusals become message pages, never the API's JSON errors. */
  const page = (route: string, handler: (ctx: Koa.Context) => Promise<void>) => async (ctx: Koa.Context) => {
    ctx.state.route = route;
    try {
      await handler(ctx);
    } catch (err) {
      if (err instanceof PageRefusal) return html(ctx, err.status, messagePage(err.title, err.text));
      if (err instanceof HttpError && err.status < 500)
        return html(ctx, err.status, messagePage('This form could not be read', err.message));
      throw err;
    }
  };

  async function personOf(subject: string | undefined): Promise<PersonRow | null> {
    const s = parseSubject(subject);
    if (!s) return null;
    const person = await personById(em(), s.accountId, s.userId);
    return person?.active && person.account_status === 'active' ? person : null;
  }

  async function showConsent(ctx: Koa.Context, loaded: Awaited<ReturnType<typeof load>>): Promise<void> {
    const { details, view, targets } = loaded;
    const person = await personOf(details.session?.accountId);
    if (!person)
      throw new PageRefusal(403, 'You cannot connect this app', 'Your access to this account has ended. Ask your administrator.');
    const resources = ([] as unknown[]).concat(details.params.resource ?? resourceUrl(issuer, null)).map(String);
    html(
      ctx,
      200,
      consentPage({
        client: view,
        action: action(details, 'consent'),
        csrf: csrfToken(ctx, purpose(details), config.production),
        accountName: person.account_name,
        personName: person.name,
        personEmail: person.email,
        resources: resources.map((r) => (r.startsWith(issuer) ? r.slice(issuer.length) : r)),
        requested: new Set(
          scopeWords(typeof details.params[CLIENT_SCOPE_PARAM] === 'string' ? (details.params[CLIENT_SCOPE_PARAM] as string) : ''),
        ),
      }),
      targets,
    );
  }

  /** Ends the sign-in step as `subject`: the provider continues to consent. */
  async function signedIn(ctx: Koa.Context, subject: string): Promise<void> {
    seeOther(
      ctx,
      await provider.interactionResult(ctx.req, ctx.res, { login: { accountId: subject } }, { mergeWithLastSubmission: false }),
    );
  }

  router.get(
    `${INTERACTION_PATH}/:uid`,
    page(`GET ${INTERACTION_PATH}/{uid}`, async (ctx) => {
      const loaded = await load(ctx);
      const { details, view, targets } = loaded;
      if (details.prompt.name === 'login') {
        const csrf = csrfToken(ctx, purpose(details), config.production);
        return html(ctx, 200, signInPage({ client: view, action: action(details, 'sign-in'), csrf }), targets);
      }
      if (details.prompt.name === 'consent') return showConsent(ctx, loaded);
      throw expired();
    }),
  );

  router.post(
    `${INTERACTION_PATH}/:uid/sign-in`,
    page(`POST ${INTERACTION_PATH}/{uid}/sign-in`, async (ctx) => {
      const form = await readForm(ctx);
      const { details, view, targets } = await load(ctx, 'login');
      if (!csrfValid(ctx, purpose(details), form.get('csrf'))) throw staleForm();
      const email = (form.get('email') ?? '').trim().slice(0, 254);
      const password = form.get('password') ?? '';
      const again = (status: number, error: string) =>
        html(
          ctx,
          status,
          signInPage({
            client: view,
            action: action(details, 'sign-in'),
            csrf: csrfToken(ctx, purpose(details), config.production),
            email,
            error,
          }),
          targets,
        );
      if (!email || !password) return again(400, 'Enter your email and your password.');
      // While the address or the email has failed too often, the password is not even checked.
      const throttled = throttles.signIn.blocked(ctx.ip, email.toLowerCase());
      if (throttled) {
        ctx.set('Retry-After', String(throttled.retryAfter));
        return again(429, 'Too many attempts. Wait a minute, then try again.');
      }
      const people = password.length > MAX_PASSWORD ? [] : await peopleSigningIn(em(), email, password);
      if (!people.length) {
        throttles.signIn.count(ctx.ip, email.toLowerCase());
        return again(200, SIGN_IN_FAILED);
      }
      if (people.length === 1) return signedIn(ctx, subjectOf(people[0].account_id, people[0].id));
      // One person, several accounts: the choice is kept with the interaction, never in the page.
      const subjects = people.map((p) => subjectOf(p.account_id, p.id));
      details.lastSubmission = { accountChoices: subjects } as unknown as Details['lastSubmission'];
      await details.persist();
      html(
        ctx,
        200,
        chooseAccountPage({
          client: view,
          action: action(details, 'account'),
          csrf: csrfToken(ctx, purpose(details), config.production),
          accounts: people.map((p) => ({ subject: subjectOf(p.account_id, p.id), accountName: p.account_name, personName: p.name })),
        }),
        targets,
      );
    }),
  );

  router.post(
    `${INTERACTION_PATH}/:uid/account`,
    page(`POST ${INTERACTION_PATH}/{uid}/account`, async (ctx) => {
      const form = await readForm(ctx);
      const { details } = await load(ctx, 'login');
      if (!csrfValid(ctx, purpose(details), form.get('csrf'))) throw staleForm();
      const choices = (details.lastSubmission as { accountChoices?: unknown } | undefined)?.accountChoices;
      const subject = form.get('subject') ?? '';
      if (!Array.isArray(choices) || !choices.includes(subject)) throw staleForm();
      if (!(await personOf(subject))) throw new PageRefusal(403, 'You cannot connect this app', 'Your access to this account has ended.');
      await signedIn(ctx, subject);
    }),
  );

  router.post(
    `${INTERACTION_PATH}/:uid/consent`,
    page(`POST ${INTERACTION_PATH}/{uid}/consent`, async (ctx) => {
      const form = await readForm(ctx);
      const { details } = await load(ctx, 'consent');
      if (!csrfValid(ctx, purpose(details), form.get('csrf'))) throw staleForm();
      const subject = details.session?.accountId;
      if (!(await personOf(subject))) throw new PageRefusal(403, 'You cannot connect this app', 'Your access to this account has ended.');
      const decision = form.get('decision');
      if (decision === 'deny') {
        const to = await provider.interactionResult(ctx.req, ctx.res, {
          error: 'access_denied',
          error_description: 'The person did not allow this connection.',
        });
        return seeOther(ctx, to);
      }
      if (decision !== 'approve') throw new HttpError(400, 'Choose Allow or Deny.');
      const { granted, rejected } = grantFromTicks(form.getAll('scope'));
      // A new grant for every consent: what the person ticks now is all it holds.
      const grant = new provider.Grant({ accountId: subject, clientId: String(details.params.client_id) });
      for (const resource of ([] as unknown[]).concat(details.params.resource ?? resourceUrl(issuer, null)).map(String)) {
        grant.addResourceScope(resource, granted);
        if (rejected.length) grant.rejectResourceScope(resource, rejected);
      }
      // OpenID words the client asked for (openid, offline_access) carry nothing of the business.
      const oidc = scopeWords(typeof details.params.scope === 'string' ? details.params.scope : '').filter(
        (s) => s === 'openid' || s === 'offline_access',
      );
      if (oidc.length) grant.addOIDCScope(oidc);
      const grantId = await grant.save();
      seeOther(ctx, await provider.interactionResult(ctx.req, ctx.res, { consent: { grantId } }));
    }),
  );
}
