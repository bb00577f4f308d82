// Recipient lists as the send endpoints take them: `recipient` is a string that may hold several
// numbers, `recipients` an array whose entries may too. Order is kept, exact duplicates dropped.
/** JavaScript's whitespace (what \\s and String.trim mean), written out for schema patterns. */
export const RECIPIENT_SPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const SEPARATORS = /[,;\s]+/;

/** The contract's limit on one recipients entry, and the width of messages.recipient. */
export const RECIPIENT_MAX_LENGTH = 191;
/**
 * Distinct recipients one send request may name (the contract leaves it open). Every record of a
 * request is created and charged in one transaction, so the cap also bounds that transaction.
 */
export const MAX_RECIPIENTS_PER_REQUEST = 1000;
// Phone numbers and chat ids are written in printable ASCII; anything else in a token (controls,
// bidi overrides, zero-width and other invisible characters, lone surrogates, other scripts) is
// refused before anything is created, and the send schemas state the same class.
const NOT_PRINTABLE_ASCII = /[^!-~]/;
export const RECIPIENT_CHARACTERS =
  'A recipient may hold only printable ASCII characters (digits, +, letters); separate recipients with commas, semicolons or spaces.';

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
    else if (NOT_PRINTABLE_ASCII.test(token)) errors[field] = [RECIPIENT_CHARACTERS];
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
