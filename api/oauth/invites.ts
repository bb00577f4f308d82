import type Koa from 'koa';
import type Router from '@koa/router';
import type { OperationDeps } from '../operation.js';
import { HttpError } from '../http/errors.js';
import { bodyText, mediaTypeOf, readRawBody } from '../http/body.js';
import { DomainError } from '../../services/platform/errors.js';
import { hashToken } from '../../services/platform/secrets.js';
import { acceptInvite, invitedPerson, INVITE_PATH } from '../../services/oauth/index.js';
import { csrfToken, csrfValid } from './csrf.js';
import { invitePage, messagePage, pageHeaders } from './pages.js';

// The page of an invitation link (services/oauth/invites.ts): the person sets their password, once.
// The link's token is in the path, so its route is logged as a template and the page sends no
// Referer anywhere (pageHeaders).

const FORM_BYTES = 4 * 1024;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

function html(ctx: Koa.Context, status: number, body: string): void {
  for (const [k, v] of Object.entries(pageHeaders())) ctx.set(k, v);
  ctx.type = 'html';
  ctx.status = status;
  ctx.body = body;
}

const gone = (ctx: Koa.Context) =>
  html(
    ctx,
    404,
    messagePage('This link does not work any more', 'It was used already, or it expired. Ask your administrator for a new one.'),
  );

export function mountInvites(router: Router, deps: OperationDeps): void {
  const { config, orm } = deps;
  const purpose = (token: string) => `invite:${hashToken(token)}`;
  const action = (token: string) => `${INVITE_PATH}/${token}`;

  router.get(`${INVITE_PATH}/:token`, async (ctx) => {
    ctx.state.route = `GET ${INVITE_PATH}/{token}`;
    const token = ctx.params.token;
    const person = TOKEN.test(token) ? await invitedPerson(orm.em.fork(), token) : null;
    if (!person) return gone(ctx);
    html(
      ctx,
      200,
      invitePage({
        personName: person.name,
        email: person.email,
        accountName: person.account_name,
        action: action(token),
        csrf: csrfToken(ctx, purpose(token), config.production),
      }),
    );
  });

  router.post(`${INVITE_PATH}/:token`, async (ctx) => {
    ctx.state.route = `POST ${INVITE_PATH}/{token}`;
    const token = ctx.params.token;
    if (!TOKEN.test(token)) return gone(ctx);
    if (mediaTypeOf(ctx.get('content-type')) !== 'application/x-www-form-urlencoded')
      return html(ctx, 415, messagePage('This form could not be read', 'Send the form from the page.'));
    let form: URLSearchParams;
    try {
      form = new URLSearchParams(bodyText(await readRawBody(ctx, FORM_BYTES)));
    } catch (err) {
      if (err instanceof HttpError && err.status < 500)
        return html(ctx, err.status, messagePage('This form could not be read', err.message));
      throw err;
    }
    if (!csrfValid(ctx, purpose(token), form.get('csrf')))
      return html(ctx, 403, messagePage('This form has expired', 'Reload the page and try again.'));
    const em = orm.em.fork();
    const person = await invitedPerson(em, token);
    if (!person) return gone(ctx);
    const again = (error: string) =>
      html(
        ctx,
        400,
        invitePage({
          personName: person.name,
          email: person.email,
          accountName: person.account_name,
          action: action(token),
          csrf: csrfToken(ctx, purpose(token), config.production),
          error,
        }),
      );
    const password = form.get('password') ?? '';
    if (password !== (form.get('confirm') ?? '')) return again('The two passwords are not the same.');
    try {
      if (!(await acceptInvite(em, token, password))) return gone(ctx);
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'invalid') return again(err.message);
      throw err;
    }
    deps.log.info({ account: person.account_id, user: person.id }, 'password set through an invitation');
    html(
      ctx,
      200,
      messagePage(
        'Your password is set',
        'You can close this page. When an app asks you to sign in to this account, use your email and this password.',
      ),
    );
  });
}
