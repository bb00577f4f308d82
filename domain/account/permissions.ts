// Permissions a user (and so the keys they issued) can hold, from the contract's table.
export const PERMISSIONS = [
  'api-keys.view',
  'api-keys.manage',
  'data.view',
  'data.records.edit',
  'payments.view',
  'automations.view',
  'communications.groups.view',
  'communications.groups.manage',
  'communications.send',
  'communications.catalogue.view',
  'communications.catalogue.manage',
  'communications.templates.view',
  'communications.templates.manage',
  'communications.campaigns.view',
  'communications.campaigns.manage',
  'forms.view',
  'forms.manage',
  'forms.send',
  'contacts.view',
  'contacts.create',
  'contacts.edit',
  'contacts.delete',
  'contacts.import',
  'leads.view',
  'leads.edit',
  'leads.assign',
  'leads.delete',
  'leads.settings',
  'leads.data.all',
  'posts.view',
  'posts.manage',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export function isPermission(p: string): p is Permission {
  return (PERMISSIONS as readonly string[]).includes(p);
}

/** `forms.*` style grants cover every permission under the prefix. */
export function hasPermission(granted: readonly string[], needed: string): boolean {
  return granted.some((g) => g === needed || g === '*' || (g.endsWith('.*') && needed.startsWith(g.slice(0, -1))));
}
