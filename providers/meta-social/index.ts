// Facebook Pages and Instagram content publishing on Meta's Graph API (notes §4): the posts
// family's publisher. Everything Graph-shaped (paths, fields, the two-step Instagram container,
// error codes) stays in this folder; the rest of the application speaks SocialPublisher.
import { trimSlash } from '../http.js';
import type { SocialPublisher } from '../types.js';
import { MetaSocialClient, type MetaSocialOptions } from './client.js';

export type { MetaSocialOptions };

export function createMetaSocial(o: MetaSocialOptions): SocialPublisher {
  const client = new MetaSocialClient({ ...o, baseUrl: trimSlash(o.baseUrl) });
  return { key: 'meta-social', publish: (to, content, progress) => client.publish(to, content, progress) };
}
