import { EntitySchema } from '@mikro-orm/core';
import * as account from './account.js';
import * as messaging from './messaging.js';
import * as webhooks from './webhooks.js';
import * as automations from './automations.js';
import * as contacts from './contacts.js';
import * as campaigns from './campaigns.js';
import * as catalogues from './catalogues.js';
import * as orders from './orders.js';
import * as shop from './shop.js';
import * as data from './data.js';
import * as groups from './groups.js';
import * as payments from './payments.js';
import * as oauth from './oauth.js';
import * as occasions from './occasions.js';
import * as templates from './templates.js';
import * as leads from './leads.js';
import * as posts from './posts.js';
import * as flows from './flows.js';
import * as agents from './agents.js';
import * as forms from './forms.js';

export * from './account.js';
export * from './messaging.js';
export * from './webhooks.js';
export * from './automations.js';
export * from './contacts.js';
export * from './campaigns.js';
export * from './catalogues.js';
export * from './orders.js';
export * from './shop.js';
export * from './data.js';
export * from './groups.js';
export * from './payments.js';
export * from './oauth.js';
export * from './occasions.js';
export * from './templates.js';
export * from './leads.js';
export * from './posts.js';
export * from './flows.js';
export * from './agents.js';
export * from './forms.js';

/** Every table the ORM knows: each family file's entities, found by what they are (a new one needs no listing here). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a heterogeneous list of schemas has no narrower common type
export const entities: EntitySchema<any, any>[] = [
  account,
  messaging,
  webhooks,
  automations,
  contacts,
  campaigns,
  catalogues,
  orders,
  shop,
  data,
  groups,
  payments,
  oauth,
  occasions,
  templates,
  leads,
  posts,
  flows,
  agents,
  forms,
].flatMap((family) => Object.values(family).filter((v): v is EntitySchema => v instanceof EntitySchema));
