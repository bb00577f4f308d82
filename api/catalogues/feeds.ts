import { HINTS, defineOperation } from '../operation.js';
import { pageSchema } from '../../services/platform/pagination.js';
import { deletedSchema } from '../answers.js';
import { catalogueListQuery } from '../../services/catalogues/catalogues.js';
import { syncReportSchema } from '../../services/catalogues/syncs.js';
import {
  FEEDS_PER_SHOP,
  createFeed,
  createFeedBody,
  deleteFeed,
  feedSchema,
  getFeed,
  listFeeds,
  runFeed,
  updateFeed,
  updateFeedBody,
} from '../../services/catalogues/feeds.js';
import { CATALOGUE_LIMITS } from '../../domain/catalogues/vocabulary.js';
import { CATALOGUE_MANAGE, CATALOGUE_VIEW, catalogueTools, catalogueWriteTools } from './catalogues.js';

// Product feeds. The contract names the create (the first pull runs at once) and the run-now; the
// list, read, change (which re-enables a switched-off feed) and delete are ours (docs/decisions.md,
// "Feeds"). A pull is a sync run of kind feed: its report is read under …/syncs/{sync}.

const feedList = pageSchema('feeds', feedSchema);
const deletedFeed = deletedSchema({ id: { type: 'integer' } });

const noInput = { type: 'object', properties: {}, additionalProperties: true } as const;
const base = { tag: 'Catalogue', auth: 'rest', issuerRequired: true } as const;
const F = '/api/v3/catalogues/{catalogue}/feeds';
// A pull reaches out to the feed's own server: open world.
const pulls = { ...HINTS.write, openWorldHint: true } as const;

export const catalogueFeedOperations = [
  defineOperation({
    ...base,
    name: 'create_catalogue_feed',
    method: 'POST',
    path: F,
    permission: CATALOGUE_MANAGE,
    summary: 'Add a product feed; its first pull runs at once',
    description:
      'Answers 201 with the feed; last_sync_id is the first pull’s sync run (poll GET …/syncs/{sync} until completed or failed). ' +
      `A pull that fails (the URL times out, answers an error or an HTML page, the file is larger than the limit or unreadable) is a failed run with its reason; ` +
      `after ${CATALOGUE_LIMITS.feedFailuresBeforeOff} failed pulls in a row the feed is switched off and the account is told (event catalogue.feed.disabled and a notice). ` +
      `At most ${FEEDS_PER_SHOP} feeds per catalogue.`,
    body: createFeedBody,
    output: { kind: 'resource', status: 201, description: 'The feed', schema: feedSchema },
    refusals: { 409: `the catalogue has ${FEEDS_PER_SHOP} feeds already` },
    mcp: { ...catalogueWriteTools, annotations: pulls },
    handler: async ({ rc, deps }, { catalogue, ...body }) => createFeed(rc, deps, catalogue, body),
  }),
  defineOperation({
    ...base,
    name: 'list_catalogue_feeds',
    method: 'GET',
    path: F,
    permission: CATALOGUE_VIEW,
    summary: 'The catalogue’s feeds, oldest first',
    description: 'Page-number pagination: default 25, at most 100; limit wins over per_page.',
    query: catalogueListQuery,
    output: { kind: 'list', status: 200, description: 'A page of feeds', schema: feedList },
    mcp: { ...catalogueTools, annotations: HINTS.read },
    handler: async ({ rc }, { catalogue, ...query }) => listFeeds(rc, catalogue, query),
  }),
  defineOperation({
    ...base,
    name: 'get_catalogue_feed',
    method: 'GET',
    path: `${F}/{feed}`,
    permission: CATALOGUE_VIEW,
    summary: 'Read a feed, with the mapping its last pull used and that pull’s outcome',
    query: noInput,
    output: { kind: 'resource', status: 200, description: 'The feed', schema: feedSchema },
    mcp: { ...catalogueTools, annotations: HINTS.read },
    handler: async ({ rc }, { catalogue, feed }) => getFeed(rc, catalogue, feed),
  }),
  defineOperation({
    ...base,
    name: 'update_catalogue_feed',
    method: 'PATCH',
    path: `${F}/{feed}`,
    permission: CATALOGUE_MANAGE,
    summary: 'Change a feed (url, schedule, mapping, mode) or switch it on or off',
    description:
      'mapping replaces the saved mapping (columns it leaves out are guessed again at the next pull). enabled true switches a feed on again and resets ' +
      'its failure count. A new url, mapping or mode, or enabled true, also resets the shrink guard’s reference, which is how a feed that really shrank is accepted.',
    body: updateFeedBody,
    output: { kind: 'resource', status: 200, description: 'The feed', schema: feedSchema },
    mcp: { ...catalogueWriteTools, annotations: HINTS.update },
    handler: async ({ rc, deps }, { catalogue, feed, ...body }) => updateFeed(rc, deps, catalogue, feed, body),
  }),
  defineOperation({
    ...base,
    name: 'delete_catalogue_feed',
    method: 'DELETE',
    path: `${F}/{feed}`,
    permission: CATALOGUE_MANAGE,
    summary: 'Delete a feed and its schedule (its products and past runs stay)',
    output: { kind: 'outcome', status: 200, description: 'Deleted', schema: deletedFeed },
    mcp: { ...catalogueTools, elevation: 'mcp:delete', annotations: HINTS.remove },
    handler: async ({ rc, deps }, { catalogue, feed }) => deleteFeed(rc, deps, catalogue, feed),
  }),
  defineOperation({
    ...base,
    name: 'run_catalogue_feed',
    method: 'POST',
    path: `${F}/{feed}/run`,
    permission: CATALOGUE_MANAGE,
    summary: 'Pull the feed now',
    description:
      'Answers 202 with the new sync run (status queued); poll GET …/syncs/{sync}. A switched-off feed, or one whose pull is under way, is a 409.',
    body: { type: 'object', additionalProperties: false, properties: {} },
    output: { kind: 'resource', status: 202, description: 'The sync run, accepted', schema: syncReportSchema },
    refusals: { 409: 'the feed is switched off, or a pull of it is under way' },
    mcp: { ...catalogueWriteTools, annotations: pulls },
    handler: async ({ rc, deps }, { catalogue, feed }) => runFeed(rc, deps, catalogue, feed),
  }),
];
