/**
 * An API answer that was not a success, with the words a person should read.
 * `fields` holds the field names a 400 or 409 answer listed.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly fields: string[];
  readonly headers: Headers;
  readonly serverMessage: string | undefined;
  /** The machine-readable `code` of the error body, when the server gives one (billing answers do). */
  readonly code: string | undefined;

  constructor(status: number, headers: Headers, body: unknown, context: string) {
    const fields = fieldsOf(body);
    const serverMessage = messageOf(body);
    super(capitalised(describe(status, fields, serverMessage, context)));
    this.name = 'ApiError';
    this.status = status;
    this.fields = fields;
    this.headers = headers;
    this.serverMessage = serverMessage;
    this.code = codeOf(body);
  }
}

/** The browser could not reach the server at all. */
export class NetworkError extends Error {
  constructor() {
    super('The Gatehouse server could not be reached. Check your connection and try again.');
    this.name = 'NetworkError';
  }
}

function fieldsOf(body: unknown): string[] {
  if (Array.isArray(body)) return body.filter((f): f is string => typeof f === 'string');
  if (body && typeof body === 'object' && 'fields' in body) {
    const fields = (body as { fields?: unknown }).fields;
    if (fields && typeof fields === 'object') return Object.keys(fields);
  }
  return [];
}

function codeOf(body: unknown): string | undefined {
  if (body && typeof body === 'object' && !Array.isArray(body) && 'code' in body) {
    const code = (body as { code?: unknown }).code;
    if (typeof code === 'string' && code.length > 0) return code;
  }
  return undefined;
}

function messageOf(body: unknown): string | undefined {
  if (body && typeof body === 'object' && 'message' in body) {
    const message = (body as { message?: unknown }).message;
    if (typeof message === 'string' && message.length > 0) return message;
  }
  return undefined;
}

const fieldNames: Record<string, string> = {
  username: 'username',
  email: 'email address',
  recovery_email: 'recovery email',
  name: 'name',
  password: 'password',
  current_password: 'current password',
  new_password: 'new password',
  tag: 'tag',
  tags: 'tags',
  role: 'role',
  data: 'key data',
  filter: 'filter',
  hostname: 'hostname pattern',
  source_ip: 'source IP pattern',
  priority: 'priority',
  host: 'host',
  port: 'port',
  ttl: 'time to live',
  code: 'code',
  expires_in: 'expiry',
};

export function listFields(fields: string[]): string {
  const words = fields.map((f) => fieldNames[f] ?? f.replaceAll('_', ' '));
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

function describe(status: number, fields: string[], message: string | undefined, context: string): string {
  const what = context ? `${context}: ` : '';
  switch (status) {
    case 400:
      return fields.length > 0
        ? `${what}please check the ${listFields(fields)}; the value is not valid.`
        : `${what}${message ? sentence(message) : 'the request was not valid.'}`;
    case 401:
      return 'Your session has ended or the credentials were not accepted. Please sign in again.';
    case 402:
      // The server says which limit or plan refused it (e.g. that accepting more devices needs a subscription).
      return message
        ? `${what}${sentence(message)}`
        : `${what}your plan does not allow this. Upgrade the subscription or free up a slot first.`;
    case 403:
      return `${what}your role in this namespace does not allow this action.`;
    case 404:
      return `${what}it no longer exists, or you do not have access to it.`;
    case 406:
      return `${what}${message ? sentence(message) : 'the server did not accept this value.'}`;
    case 409:
      return fields.length > 0
        ? `${what}the ${listFields(fields)} ${fields.length > 1 ? 'are' : 'is'} already in use.`
        : `${what}it conflicts with something that already exists.`;
    case 422:
      return `${what}${message ? sentence(message) : 'the server could not process this value.'}`;
    case 424:
      // A service Gatehouse depends on failed (the payment provider, a container engine): the server names it.
      return message
        ? `${what}${sentence(message)}`
        : `${what}a service Gatehouse depends on did not answer. Try again in a moment.`;
    case 429:
      // The server says how long, when it knows (a source refused for failed sign-ins, a limit per minute).
      return `${what}${message ? sentence(message) : 'too many attempts. Wait a little and try again.'}`;
    case 503:
      return `${what}the server cannot reach its database right now. You are still signed in; try again in a moment.`;
    case 501:
      return `${what}this feature is not available in this edition of Gatehouse.`;
    default:
      if (status >= 500)
        return `${what}the server ran into a problem. Try again; if it keeps happening, check the server log.`;
      return `${what}${message ? sentence(message) : `the server answered ${status}.`}`;
  }
}

/** What the console shows starts with a capital letter, with or without a context before it. */
function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function sentence(text: string): string {
  const trimmed = text.trim();
  const first = trimmed.charAt(0).toLowerCase() + trimmed.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}

export function errorText(error: unknown): string {
  if (error instanceof ApiError || error instanceof NetworkError) return error.message;
  if (error instanceof Error) return capitalised(error.message);
  return 'Something went wrong.';
}
