import { test } from 'node:test';
import assert from 'node:assert/strict';
import Router from '@koa/router';
import { allRoutes, customerOperations, operatorOperations, pageOperations } from '../../api/operations.js';
import type { AppDeps } from '../../api/http/app.js';
import { koaPath, type RouteDef } from '../../api/http/registry.js';
import { byPrecedence } from '../../api/http/precedence.js';
import { loadConfig } from '../../config.js';

// The route list is derived from the operation registry, its order computed (api/http/precedence.ts).
// Here: every registered operation is routed, and every route answers its own URLs — no earlier
// route reads one of its literal segments as a parameter.

const routes = allRoutes({ config: loadConfig() } as AppDeps);

/** A URL the route serves: each parameter filled with a value no literal segment uses. */
const sampleUrl = (path: string) => path.replace(/\{\w+\}/g, 'p-0');

/** Each route whose own sample URL the router hands to some other route first. */
function misrouted(list: readonly Pick<RouteDef, 'method' | 'path'>[]): string[] {
  const router = new Router();
  for (const [i, r] of list.entries()) router.register(koaPath(r.path), [r.method], () => undefined, { name: String(i) });
  const wrong: string[] = [];
  for (const [i, r] of list.entries()) {
    const first = router.match(sampleUrl(r.path), r.method).pathAndMethod[0];
    if (first?.name !== String(i))
      wrong.push(`${r.method} ${r.path} → ${first ? `${list[Number(first.name)].method} ${list[Number(first.name)].path}` : 'nothing'}`);
  }
  return wrong;
}

test('every registered operation, customer, operator and page, is routed once', () => {
  const routed = routes.map((r) => `${r.method} ${r.path}`);
  const registered = [...customerOperations, ...operatorOperations, ...pageOperations].map((op) => `${op.method} ${op.path}`);
  assert.deepEqual(
    registered.filter((k) => !routed.includes(k)),
    [],
  );
  assert.equal(new Set(routed).size, routed.length, 'a method and path routed twice');
  assert.ok(registered.length >= 161, `${registered.length} operations`);
});

test('every route serves its own URLs: a literal segment is never read as another route’s parameter', () => {
  assert.deepEqual(misrouted(routes), []);
});

test('the precedence check fails on an order written by hand the wrong way round', () => {
  const handWritten = [
    { method: 'GET' as const, path: '/api/v3/catalogues/{catalogue}' },
    { method: 'GET' as const, path: '/api/v3/catalogues/orders' },
  ];
  assert.deepEqual(misrouted(handWritten), ['GET /api/v3/catalogues/orders → GET /api/v3/catalogues/{catalogue}']);
  assert.deepEqual(misrouted(byPrecedence(handWritten)), []);
});
