import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canMove, movableFrom } from '../../domain/messaging/message-status.js';

test('statuses only move forward; duplicates and late receipts change nothing', () => {
  assert.ok(canMove('queued', 'processing'));
  assert.ok(canMove('sent', 'delivered'));
  assert.ok(canMove('sent', 'read'), 'read may arrive without delivered');
  assert.ok(canMove('checking_delivery', 'delivered'));
  assert.ok(!canMove('delivered', 'sent'));
  assert.ok(!canMove('read', 'delivered'));
  assert.ok(!canMove('delivered', 'delivered'));
  assert.ok(!canMove('delivered', 'failed'), 'a late failure never overwrites a delivery');
  assert.ok(canMove('sent', 'failed'));
  assert.ok(!canMove('failed', 'delivered'));
  assert.deepEqual(movableFrom('delivered').sort(), ['checking_delivery', 'processing', 'queued', 'sent']);
});
