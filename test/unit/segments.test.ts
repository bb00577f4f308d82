import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateSegments } from '../../domain/messaging/segments.js';

test('GSM-7: 160 in one segment, 161 in two, 153 per part', () => {
  assert.deepEqual(estimateSegments('a'.repeat(160)), { encoding: 'GSM-7', units: 160, segments: 1 });
  assert.equal(estimateSegments('a'.repeat(161)).segments, 2);
  assert.equal(estimateSegments('a'.repeat(306)).segments, 2);
  assert.equal(estimateSegments('a'.repeat(307)).segments, 3);
});

test('extension characters count twice', () => {
  assert.equal(estimateSegments('€'.repeat(80)).units, 160);
  assert.equal(estimateSegments('€'.repeat(80)).segments, 1);
  assert.equal(estimateSegments('{'.repeat(81)).segments, 2);
});

test('one non-GSM character makes the whole message UCS-2: 70 single, 67 per part', () => {
  assert.deepEqual(estimateSegments('ж'.repeat(70)), { encoding: 'UCS-2', units: 70, segments: 1 });
  assert.equal(estimateSegments('ж'.repeat(71)).segments, 2);
  assert.equal(estimateSegments('a'.repeat(100) + 'ж').encoding, 'UCS-2');
  assert.equal(estimateSegments('😀'.repeat(35)).units, 70, 'an emoji takes two UCS-2 units');
  assert.equal(estimateSegments('😀'.repeat(36)).segments, 2);
});
