import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasPermission } from '../../domain/account/permissions.js';
import { authorizeIssuer, bearerToken, type Principal } from '../../api/http/auth.js';
import { HttpError, asHttpError, dataErrorBody, v3ErrorBody } from '../../api/http/errors.js';

const principal = (user: Principal['user']): Principal => ({
  account: {
    id: 1,
    uid: 'acc',
    name: 'A',
    status: 'active',
    wallet_balance: '0',
    currency: 'USD',
    billing_mode: 'prepaid',
    created_at: '2026-01-01 00:00:00+00',
  },
  key: { id: 1, kind: 'rest', name: 'k', user_id: user?.id ?? null, expires_at: null, revoked_at: null },
  user,
});

test('wildcard grants cover their family only', () => {
  assert.ok(hasPermission(['forms.*'], 'forms.view'));
  assert.ok(!hasPermission(['forms.*'], 'data.view'));
  assert.ok(hasPermission(['*'], 'payments.view'));
  assert.ok(!hasPermission(['contacts.view'], 'contacts.edit'));
});

test('issuer checks: no issuer, a deactivated issuer or a missing permission are refused with 403', () => {
  const refuse = (p: Principal, perm?: string) =>
    assert.throws(
      () => authorizeIssuer(p, perm),
      (e: unknown) => asHttpError(e)?.status === 403,
    );
  refuse(principal(null));
  refuse(principal({ id: 2, active: false, permissions: ['*'] }));
  refuse(principal({ id: 2, active: true, permissions: ['contacts.view'] }), 'contacts.delete');
  assert.doesNotThrow(() => authorizeIssuer(principal({ id: 2, active: true, permissions: ['contacts.view'] }), 'contacts.view'));
});

test('only a Bearer header yields a token', () => {
  assert.equal(bearerToken('Bearer abc'), 'abc');
  assert.equal(bearerToken('bearer abc'), 'abc');
  assert.equal(bearerToken('Basic abc'), null);
  assert.equal(bearerToken(undefined), null);
  assert.equal(bearerToken('Bearer a b'), null);
});

test('both error envelopes', () => {
  const e = new HttpError(422, 'The name field is required.', { errors: { name: ['The name field is required.'] } });
  assert.deepEqual(v3ErrorBody(e), {
    status: 'error',
    message: 'The name field is required.',
    errors: { name: ['The name field is required.'] },
  });
  assert.deepEqual(dataErrorBody(e), {
    error: { code: 'validation_error', message: 'The name field is required.', retryable: false, field: 'name' },
    message: 'The name field is required.',
    code: 'validation_error',
    errors: { name: ['The name field is required.'] },
  });
  // A refusal of several fields names none of them in error.field (errors lists each).
  const two = dataErrorBody(new HttpError(422, 'The data is invalid.', { errors: { a: ['x'], b: ['y'] } }));
  assert.equal('field' in two.error, false);
  const limited = dataErrorBody(new HttpError(429, 'Slow down.', { details: { retry_after_seconds: 30 } }));
  assert.equal(limited.error.code, 'rate_limited');
  assert.equal(limited.error.retryable, true);
  assert.deepEqual(limited.error.details, { retry_after_seconds: 30 });
  assert.equal(dataErrorBody(new HttpError(404, 'Record not found.')).code, 'not_found');
});
