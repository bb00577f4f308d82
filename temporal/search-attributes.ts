import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// Every workflow carries the account and the resource it works for, so an operator can find
// "all workflows of account 42" or "the workflow of message msg_x" in the Temporal UI.
export const AccountId = defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD);
export const ResourceId = defineSearchAttributeKey('ResourceId', SearchAttributeType.KEYWORD);
export const ResourceType = defineSearchAttributeKey('ResourceType', SearchAttributeType.KEYWORD);

export const searchAttributeKeys = [AccountId, ResourceId, ResourceType];

/** `--search-attribute` flags for `temporal server start-dev`. */
export const devServerSearchAttributeFlags = searchAttributeKeys.flatMap((k) => ['--search-attribute', `${k.name}=Keyword`]);
