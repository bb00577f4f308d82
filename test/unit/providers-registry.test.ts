import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../config.js';
import { DEFAULT_PROVIDER, UnknownProvider, createProviderRegistry, providerRegistry } from '../../providers/index.js';

// The registry: one adapter per stored `channels.provider`, each serving its own webhooks.
const config = loadConfig();
const registry = createProviderRegistry(config);

test('adapters are found by the stored provider; a channel without one gets its type’s default', () => {
  assert.equal(registry.get('sms-gateway').kind, 'sms');
  assert.equal(registry.get('whatsapp-cloud').kind, 'chat');
  assert.equal(registry.forChannel('sms', null).key, DEFAULT_PROVIDER.sms);
  assert.equal(registry.forChannel('whatsapp', undefined).key, DEFAULT_PROVIDER.whatsapp);
  assert.equal(registry.sms('sms-gateway').key, 'sms-gateway');
  assert.equal(registry.chat(null).key, 'whatsapp-cloud');
  assert.equal(registry.chatGroups().key, 'whatsapp-cloud', 'chat groups are the chat provider’s');
  assert.equal(providerRegistry(config), providerRegistry(config), 'one registry per configuration');
});

test('payments: the configured provider, found by what a payment stores; another name is refused', () => {
  const p = registry.payments();
  assert.equal(p.kind, 'payment');
  assert.equal(p.key, 'mpesa-daraja');
  assert.equal(registry.payments('mpesa-daraja'), p);
  assert.equal(registry.payments(null), p);
  assert.throws(() => registry.payments('stripe'), UnknownProvider);
  assert.deepEqual(p.currencies, config.paymentCurrencies);
  // Its callbacks are its own, beside the messaging webhooks, and share no path with them.
  const messaging = new Set(registry.all.flatMap((a) => a.webhooks.map((w) => w.path)));
  assert.deepEqual(
    p.callbacks.map((c) => `${c.method} ${c.path}`),
    ['POST /providers/payments/result', 'POST /providers/payments/refund-result'],
  );
  for (const c of p.callbacks) assert.ok(!messaging.has(c.path), c.path);
});

test('an unknown provider, or one of the wrong channel type, is refused', () => {
  assert.throws(() => registry.get('carrier-pigeon'), UnknownProvider);
  assert.throws(() => registry.forChannel('whatsapp', 'sms-gateway'), UnknownProvider);
  assert.throws(() => registry.sms('whatsapp-cloud'), UnknownProvider);
});

test('every adapter declares its webhooks; no two share a method and path', () => {
  const routes = registry.all.flatMap((p) => p.webhooks.map((w) => `${w.method} ${w.path}`));
  assert.deepEqual(routes.sort(), [
    'GET /providers/whatsapp/webhook',
    'POST /providers/sms/inbound',
    'POST /providers/sms/status',
    'POST /providers/whatsapp/webhook',
  ]);
  for (const p of registry.all) for (const w of p.webhooks) assert.ok(w.parse || w.handshake, `${w.method} ${w.path} reads nothing`);
});
