import crypto from 'node:crypto';
import type { OperatorContext } from '../platform/context.js';
import { conflict, notFound } from '../platform/errors.js';
import { requireAccount } from '../account/index.js';
import type { Config } from '../../config.js';
import {
  deleteProfileRow,
  insertProfile,
  profileByName,
  profilesOf,
  settingsOf,
  updateProfile,
  upsertSettings,
  type ProfileFields,
} from './store.js';
import { profileView, settingsView } from './views.js';

// The operator's side of the agents family: the account's engine switch and API availability, and
// its agent profiles (what each agent is told, its model, its tools and its limits).

export async function getEngineSettings(oc: OperatorContext, accountId: number) {
  await requireAccount(oc, accountId);
  return settingsView(accountId, await settingsOf(oc.em, accountId));
}

export async function putEngineSettings(oc: OperatorContext, accountId: number, v: { engine_enabled?: boolean; api_enabled?: boolean }) {
  await requireAccount(oc, accountId);
  const row = await upsertSettings(oc.em, accountId, v);
  oc.log.info({ actor: 'operator', account: accountId, ...v }, 'agent engine settings changed');
  return settingsView(accountId, row);
}

export interface ProfileInput {
  name: string;
  instructions: string;
  model?: string;
  mcp_servers: string[];
  tools?: string[];
  preapproved?: string[];
  max_steps?: number;
  max_seconds?: number;
  token_budget?: number | null;
  api_enabled?: boolean;
}

export const PROFILE_DEFAULTS = { max_steps: 20, max_seconds: 600 };

export async function createProfile(oc: OperatorContext, config: Pick<Config, 'modelName'>, accountId: number, b: ProfileInput) {
  await requireAccount(oc, accountId);
  const fields: ProfileFields = {
    name: b.name,
    instructions: b.instructions,
    model: b.model ?? config.modelName,
    mcp_servers: [...new Set(b.mcp_servers)],
    tools: [...new Set(b.tools ?? [])],
    preapproved: [...new Set(b.preapproved ?? [])],
    max_steps: b.max_steps ?? PROFILE_DEFAULTS.max_steps,
    max_seconds: b.max_seconds ?? PROFILE_DEFAULTS.max_seconds,
    token_budget: b.token_budget === undefined || b.token_budget === null ? null : String(b.token_budget),
    api_enabled: b.api_enabled ?? true,
  };
  const row = await insertProfile(oc.em, accountId, crypto.randomUUID(), fields);
  if (!row) throw conflict('An agent with this name already exists in the account.');
  return profileView(row);
}

export async function listProfiles(oc: OperatorContext, accountId: number) {
  await requireAccount(oc, accountId);
  return (await profilesOf(oc.em, accountId)).map(profileView);
}

export async function changeProfile(oc: OperatorContext, accountId: number, name: string, b: Partial<Omit<ProfileInput, 'name'>>) {
  await requireAccount(oc, accountId);
  const current = await profileByName(oc.em, accountId, name);
  if (!current) throw notFound('Agent');
  const row = await updateProfile(oc.em, accountId, current.id, {
    instructions: b.instructions,
    model: b.model,
    mcp_servers: b.mcp_servers ? [...new Set(b.mcp_servers)] : undefined,
    tools: b.tools ? [...new Set(b.tools)] : undefined,
    preapproved: b.preapproved ? [...new Set(b.preapproved)] : undefined,
    max_steps: b.max_steps,
    max_seconds: b.max_seconds,
    token_budget: b.token_budget === undefined ? undefined : b.token_budget === null ? null : String(b.token_budget),
    api_enabled: b.api_enabled,
  });
  if (!row) throw notFound('Agent');
  return profileView(row);
}

export async function removeProfile(oc: OperatorContext, accountId: number, name: string): Promise<{ deleted: true }> {
  await requireAccount(oc, accountId);
  const current = await profileByName(oc.em, accountId, name);
  if (!current || !(await deleteProfileRow(oc.em, accountId, current.id))) throw notFound('Agent');
  return { deleted: true };
}
