// Recipient lists as the send endpoints take them: `recipient` is a string that may hold several
// numbers, `recipients` an array whose entries may too. Order is kept, exact duplicates dropped.
const SEPARATORS = /[,;\s]+/;

export function splitList(value: string): string[] {
  return value
    .split(SEPARATORS)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export function mergeRecipients(recipient: string | undefined, recipients: string[] | undefined): string[] {
  const all = [...(recipient ? splitList(recipient) : []), ...(recipients ?? []).flatMap(splitList)];
  return [...new Set(all)];
}

/** Digits with a leading plus for the providers; null when the input cannot be a phone number. */
export function toE164(raw: string): string | null {
  const digits = raw.replace(/[^\d]/g, '');
  if (digits.length < 6 || digits.length > 15) return null;
  return `+${digits}`;
}
