// What a person's password must be before it is hashed (services/oauth/passwords.ts). Length is
// the rule that matters (NIST SP 800-63B section 3.1.1.2); composition rules are not imposed.

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

/** Why a new password cannot be used, in words for the person setting it; null when it can. */
export function passwordProblem(password: string, email: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN) return `Use at least ${PASSWORD_MIN} characters.`;
  if (length > PASSWORD_MAX) return `Use at most ${PASSWORD_MAX} characters.`;
  if (password.includes('\u0000')) return 'The password contains a character that cannot be used.';
  if (password.trim().toLowerCase() === email.trim().toLowerCase()) return 'Do not use your email address as your password.';
  if (new Set(password).size < 4) return 'Use more different characters.';
  return null;
}
