// Recipient lists as the send endpoints take them: `recipient` is a string that may hold several
// numbers, `recipients` an array whose entries may too. Order is kept, exact duplicates dropped.
const SEPARATORS = /[,;\s]+/;

/** The contract's limit on one recipients entry, and the width of messages.recipient. */
export const RECIPIENT_MAX_LENGTH = 191;
/**
 * Distinct recipients one send request may name (the contract leaves it open). Every record of a
 * request is created and charged in one transaction, so the cap also bounds that transaction.
 */
export const MAX_RECIPIENTS_PER_REQUEST = 1000;
// Controls, format characters (bidi overrides, zero-width), lone surrogates, private use and unassigned
// code points: nothing a phone number is written with, and some of them cannot be stored at all.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}]/u;

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

/**
 * mergeRecipients, with every token checked before anything is created: a token too long to store
 * or holding unprintable characters, or more distinct recipients than a request may name, is an
 * error keyed by the field it came from (`recipient`, `recipients.<i>`). A token that is printable
 * but not a phone number is not an error here: it gets a failed record (the contract's rule 3).
 */
export function checkRecipients(
  recipient: string | undefined,
  recipients: string[] | undefined,
): { recipients: string[]; errors: Record<string, string[]> } {
  const errors: Record<string, string[]> = {};
  const check = (field: string, token: string) => {
    if (errors[field]) return;
    if (token.length > RECIPIENT_MAX_LENGTH)
      errors[field] = [`Each recipient may be at most ${RECIPIENT_MAX_LENGTH} characters (after splitting at separators).`];
    else if (UNPRINTABLE.test(token)) errors[field] = ['A recipient may not contain control or invisible characters.'];
  };
  if (recipient) for (const t of splitList(recipient)) check('recipient', t);
  (recipients ?? []).forEach((entry, i) => {
    for (const t of splitList(entry)) check(`recipients.${i}`, t);
  });
  const merged = mergeRecipients(recipient, recipients);
  if (merged.length === 0) {
    errors.recipient = ['The recipient field is required when recipients is not present.'];
    errors.recipients = ['The recipients field is required when recipient is not present.'];
  }
  if (merged.length > MAX_RECIPIENTS_PER_REQUEST)
    errors.recipients = [`At most ${MAX_RECIPIENTS_PER_REQUEST} distinct recipients per request; this one names ${merged.length}.`];
  return { recipients: merged, errors };
}

/** Digits with a leading plus for the providers; null when the input cannot be a phone number. */
export function toE164(raw: string): string | null {
  const digits = raw.replace(/[^\d]/g, '');
  if (digits.length < 6 || digits.length > 15) return null;
  return `+${digits}`;
}
