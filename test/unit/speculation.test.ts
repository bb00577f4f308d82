import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Authenticated } from '../../api/http/auth.js';
import {
  SPECULATE_BELOW_IN_FLIGHT,
  forgetAuthenticated,
  rememberAuthenticated,
  rememberedPrincipal,
  samePrincipal,
  speculativePrincipal,
} from '../../api/http/speculation.js';
import { requestEnded, requestStarted } from '../../services/platform/load.js';

const authenticated = (over: { remaining?: number; balance?: string; permissions?: string[] } = {}): Authenticated => ({
  account: {
    id: 7,
    uid: 'acc_7',
    name: 'Shop',
    status: 'active',
    wallet_balance: over.balance ?? '100.0000',
    currency: 'USD',
    billing_mode: 'prepaid',
    created_at: '2026-01-01 00:00:00+00',
  },
  key: { id: 3, kind: 'rest', name: 'k', user_id: 9, expires_at: null, revoked_at: null },
  user: { id: 9, active: true, permissions: over.permissions ?? ['*'] },
  rate: { limit: 60, remaining: over.remaining ?? 50, resetAt: 0, retryAfter: 1, allowed: true },
  fingerprint: `fp-${over.balance ?? '100.0000'}-${(over.permissions ?? ['*']).join(',')}`,
});

test('only a token admitted before, with room left in its window, starts a read early', () => {
  assert.equal(speculativePrincipal('Bearer unknown'), null);
  rememberAuthenticated('Bearer a', authenticated());
  const early = speculativePrincipal('Bearer a');
  assert.equal(early?.account.id, 7);
  assert.ok(early && !('rate' in early) && !('remaining' in early), 'the principal alone');
  rememberAuthenticated('Bearer a', authenticated({ remaining: 1 }));
  assert.equal(speculativePrincipal('Bearer a'), null, 'a caller at its limit gets nothing done before its refusal');
  rememberAuthenticated('Bearer a', authenticated({ remaining: 0 }));
  assert.equal(speculativePrincipal('Bearer a'), null);
  rememberAuthenticated('Bearer a', authenticated());
  forgetAuthenticated('Bearer a');
  assert.equal(speculativePrincipal('Bearer a'), null, 'forgotten after a refusal');
});

test('a write admitted in its own statement starts from the remembered principal whatever the window and the load', () => {
  assert.equal(rememberedPrincipal('Bearer w'), null);
  rememberAuthenticated('Bearer w', authenticated({ remaining: 0 }));
  for (let i = 0; i < 10; i++) requestStarted();
  try {
    const p = rememberedPrincipal('Bearer w');
    assert.equal(p?.fingerprint, 'fp-100.0000-*', 'the statement checks the window and the digest itself');
    assert.ok(p && !('rate' in p) && !('remaining' in p));
  } finally {
    for (let i = 0; i < 10; i++) requestEnded();
  }
  forgetAuthenticated('Bearer w');
  assert.equal(rememberedPrincipal('Bearer w'), null);
});

test('no early reads under load', () => {
  rememberAuthenticated('Bearer b', authenticated());
  for (let i = 0; i <= SPECULATE_BELOW_IN_FLIGHT; i++) requestStarted();
  try {
    assert.equal(speculativePrincipal('Bearer b'), null);
  } finally {
    for (let i = 0; i <= SPECULATE_BELOW_IN_FLIGHT; i++) requestEnded();
  }
  assert.ok(speculativePrincipal('Bearer b'));
});

test('the same principal means every field authentication read, the rate aside', () => {
  const early = speculativePrincipal('Bearer b')!;
  assert.ok(samePrincipal(authenticated({ remaining: 3 }), early), 'the window moved: still the same principal');
  assert.ok(!samePrincipal(authenticated({ balance: '99.0000' }), early));
  assert.ok(!samePrincipal(authenticated({ permissions: ['data.view'] }), early));
  const suspended = authenticated();
  suspended.account.status = 'suspended';
  assert.ok(!samePrincipal(suspended, early));
});

test('at most 10,000 tokens are remembered, the oldest forgotten first', () => {
  for (let i = 0; i < 10_001; i++) rememberAuthenticated(`Bearer t${i}`, authenticated());
  assert.equal(speculativePrincipal('Bearer t0'), null);
  assert.ok(speculativePrincipal('Bearer t10000'));
  assert.ok(speculativePrincipal('Bearer t1'));
});
