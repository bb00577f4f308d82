import { HINTS, defineOperation } from '../operation.js';
import { profileSchema, balanceSchema, credentialSchema, profileOf, balanceOf, credentialOf } from '../../services/account/index.js';
import { noInput } from '../../services/platform/storable.js';

// Profile, balance and the credential check: original endpoints, so only the account credential is
// checked (no issuer permission).

export const getProfile = defineOperation({
  name: 'get_profile',
  method: 'GET',
  path: '/api/v3/me',
  tag: 'Profile',
  summary: 'The account behind the key',
  auth: 'rest',
  query: noInput,
  output: { kind: 'resource', status: 200, description: 'Account profile', schema: profileSchema },
  mcp: { servers: ['overview', 'account'], scope: 'mcp:overview', annotations: HINTS.read },
  handler: async ({ rc }) => profileOf(rc),
});

export const getBalance = defineOperation({
  name: 'get_balance',
  method: 'GET',
  path: '/api/v3/balance',
  tag: 'Balance',
  summary: 'Wallet balance, currency and billing mode',
  auth: 'rest',
  query: noInput,
  output: { kind: 'resource', status: 200, description: 'Wallet', schema: balanceSchema },
  mcp: { servers: ['overview', 'account'], scope: 'mcp:overview', annotations: HINTS.read },
  handler: async ({ rc }) => balanceOf(rc),
});

export const checkCredential = defineOperation({
  name: 'check_credential',
  method: 'GET',
  path: '/api/v3/_auth',
  tag: 'Authentication',
  summary: 'Check a credential',
  auth: 'rest',
  query: noInput,
  output: { kind: 'resource', status: 200, description: 'The credential is valid', schema: credentialSchema },
  mcp: { servers: ['account'], scope: 'mcp:accounts', annotations: HINTS.read },
  handler: async ({ rc }) => credentialOf(rc),
});

export const accountOperations = [getProfile, getBalance, checkCredential];
