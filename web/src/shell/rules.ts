// The account field rules the server checks (plugins/community/users/schemas.ts, plugins/cloud/accounts/routes.ts),
// said once for every screen: the limits, the hint under a field and the message when a value breaks them. A field
// never cuts a value short (no maxLength on the input): a pasted password that is too long is refused with the
// reason, so the person does not sign up with a password other than the one they pasted.

export interface FieldRule {
  min: number;
  max: number;
  /** The characters allowed, when not any. */
  chars?: RegExp;
  /** The characters allowed, in words, e.g. "letters, digits and - _ . @". */
  charsText?: string;
  /** What goes under the field. */
  hint: string;
}

function rule(min: number, max: number, chars?: { only: RegExp; text: string }): FieldRule {
  const hint = chars ? `${min} to ${max} characters: ${chars.text}.` : `${min} to ${max} characters.`;
  return { min, max, hint, ...(chars ? { chars: chars.only, charsText: chars.text } : {}) };
}

export const fieldRules = {
  /** A person's name. */
  name: rule(3, 20),
  username: rule(3, 30, { only: /^[A-Za-z0-9_.@-]*$/, text: 'letters, digits and - _ . @' }),
  /** A password set at first-run setup, in Settings, by an administrator or with a mailed reset link. */
  password: rule(5, 30),
  /** A password chosen at sign-up. */
  registrationPassword: rule(5, 64, { only: /^[A-Za-z0-9_-]*$/, text: 'letters, digits, _ and -' }),
  /** A password typed to sign in: no password any of the rules above allows is longer. */
  signInPassword: rule(1, 64),
} satisfies Record<string, FieldRule>;

/**
 * What is wrong with `value` under `rule`, in a sentence, or null. A value that is too short is only reported when
 * `complete` (the form is being sent): while someone types, only what typing more cannot mend is said.
 */
export function ruleProblem(rule: FieldRule, value: string, complete = false): string | null {
  // The server counts as JavaScript does (UTF-16 code units).
  const length = value.length;
  if (length > rule.max) return `Use at most ${rule.max} characters; this has ${length}.`;
  if (rule.chars && !rule.chars.test(value)) return `Use only ${rule.charsText}.`;
  if (complete && length < rule.min)
    return length === 0 ? 'Fill this in.' : `Use at least ${rule.min} characters; this has ${length}.`;
  return null;
}

/** An e-mail address: something, an @, and a domain with a dot (the server checks the full format). */
export function emailProblem(value: string, complete = false): string | null {
  if (value.length > 255) return `Use at most 255 characters; this has ${value.length}.`;
  if (!complete) return null;
  if (value.trim() === '') return 'Fill this in.';
  return /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value.trim())
    ? null
    : 'Enter an e-mail address, like ada@example.com.';
}
