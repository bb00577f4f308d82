// Provider simulator: a Twilio-shaped SMS gateway under /sms, the WhatsApp Cloud API (messages, the
// Groups API and the Commerce catalogue API) under /whatsapp/{version}, Safaricom Daraja's M-Pesa
// Express, reversals and the organisation statement under /daraja, Facebook Page and Instagram
// publishing under /graph/{version} (social.ts), an OpenAI-compatible chat model under /v1
// (model.ts), and test controls under /_sim. Built as a factory so tests can run it in-process on port 0 and read its state directly.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { BodyError } from './body.js';
import { simRouter } from './inspection.js';
import { resolveOptions, type SimulatorOptions } from './options.js';
import { CREATE_MESSAGE_PATH, createMessage, smsRouter } from './sms-gateway.js';
import { plainExchange } from './exchange.js';
import { createState, type SimState } from './state.js';
import { whatsappRouter } from './whatsapp.js';
import { metaCatalogueRouter } from './meta-catalogue.js';
import { groupsSimRouter, whatsappGroupsRouter } from './whatsapp-groups.js';
import { darajaRouter, paymentsSimRouter } from './mpesa-daraja.js';
import { templatesSimRouter, whatsappTemplatesRouter } from './whatsapp-templates.js';
import { socialRouter, socialSimRouter } from './social.js';
import { modelRouter } from './model.js';

export type { SimulatorOptions } from './options.js';
export type { SimState } from './state.js';

export interface RunningSimulator {
  port: number;
  /** e.g. http://127.0.0.1:4010 — append /sms or /whatsapp/v21.0 for the adapters' base URLs. */
  url: string;
  close(): Promise<void>;
}

export interface Simulator {
  app: Koa;
  state: SimState;
  listen(port?: number): Promise<RunningSimulator>;
  /** Resolves when every scheduled receipt and webhook retry has finished. */
  idle(): Promise<void>;
}

export function createSimulator(opts: Partial<SimulatorOptions> = {}): Simulator {
  const options = resolveOptions(opts);
  const state = createState(options);
  const log = state.log;
  const app = new Koa();

  // A request that threw: a body problem is the client's (its status), anything else is ours (500).
  const answerFailure = (out: { status: number; body: unknown }, err: unknown, method?: string, path?: string): void => {
    if (err instanceof BodyError) {
      out.status = err.status;
      out.body = { error: err.message };
    } else {
      log.error({ err, method, path }, 'simulator request failed');
      out.status = 500;
      out.body = { error: 'simulator internal error' };
    }
  };

  app.use(async (ctx, next) => {
    const debug = log.isLevelEnabled('debug');
    const started = debug ? Date.now() : 0;
    try {
      await next();
    } catch (err) {
      answerFailure(ctx, err, ctx.method, ctx.path);
    }
    if (debug) log.debug({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Date.now() - started }, 'request');
  });

  // The groups router comes first: it takes group sends off the messages path and group ids off
  // the catalogue's /{id} routes, and hands everything else on.
  const routers = [
    smsRouter(state),
    whatsappGroupsRouter(state),
    // Before the catalogue's /{id} routes: a template id is answered here, any other id handed on.
    whatsappTemplatesRouter(state),
    whatsappRouter(state),
    metaCatalogueRouter(state),
    groupsSimRouter(state),
    darajaRouter(state),
    paymentsSimRouter(state),
    templatesSimRouter(state),
    socialRouter(state.social),
    socialSimRouter(state.social),
    // The agents' model: OpenAI-compatible chat completions under /v1 (simulator/model.ts).
    modelRouter(state),
    simRouter(state),
  ];
  for (const router of routers) {
    app.use(router.routes()).use(router.allowedMethods());
  }

  app.use((ctx) => {
    ctx.status = 404;
    ctx.body = { error: `no simulator route for ${ctx.method} ${ctx.path}` };
  });

  // Twilio's create-message (one request per SMS) is served without Koa; everything else goes through it.
  const koa = app.callback();
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const match = req.method === 'POST' ? CREATE_MESSAGE_PATH.exec(req.url ?? '') : null;
    if (!match) {
      void koa(req, res);
      return;
    }
    const ex = plainExchange(req, res, { accountSid: decodeURIComponent(match[1]) });
    createMessage(ex, state).then(
      () => ex.send(),
      (err: unknown) => {
        answerFailure(ex, err, req.method, req.url);
        ex.send();
      },
    );
  };

  const listen = (port = 0): Promise<RunningSimulator> =>
    new Promise((resolve, reject) => {
      const server: Server = createServer(handle).listen(port, options.host);
      server.once('error', reject);
      server.once('listening', () => {
        const actual = (server.address() as AddressInfo).port;
        log.info({ port: actual, host: options.host }, 'provider simulator listening');
        resolve({
          port: actual,
          url: `http://${options.host}:${actual}`,
          close: () =>
            new Promise<void>((done) => {
              // Stop timers first so no callback fires into a test that already finished.
              state.life.stop();
              server.close(() => done());
              server.closeAllConnections();
            }),
        });
      });
    });

  return { app, state, listen, idle: () => state.life.idle() };
}
