// The calls the shell itself makes: the instance, first-run setup, signing in and the session's
// namespace. Every plugin keeps its own table beside its screens (`plugins/<name>/web/api.ts`); the client takes a
// call from any table, and test/e2e/web/api-contract.test.ts checks every table against the server's OpenAPI document.

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Call {
  readonly method: Method;
  readonly path: string;
}

export const sessionCalls = {
  info: { method: 'GET', path: '/info' },
  setup: { method: 'POST', path: '/api/setup' },
  login: { method: 'POST', path: '/api/login' },
  currentUser: { method: 'GET', path: '/api/auth/user' },
  signOut: { method: 'DELETE', path: '/api/auth/user' },
  switchNamespace: { method: 'GET', path: '/api/auth/token/{tenant}' },
  mfaAuth: { method: 'POST', path: '/api/user/mfa/auth' },
  mfaRecover: { method: 'POST', path: '/api/user/mfa/recover' },
  listNamespaces: { method: 'GET', path: '/api/namespaces' },
  createNamespace: { method: 'POST', path: '/api/namespaces' },
} as const satisfies Record<string, Call>;
