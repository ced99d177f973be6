// Every HTTP call the console makes, as data (SPEC.md section 7). The client builds requests from this
// table and test/e2e/web/api-contract.test.ts checks each entry against the server's OpenAPI document.

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Call {
  readonly method: Method;
  readonly path: string;
}

export const calls = {
  info: { method: 'GET', path: '/info' },
  setup: { method: 'POST', path: '/api/setup' },
  login: { method: 'POST', path: '/api/login' },
  currentUser: { method: 'GET', path: '/api/auth/user' },
  switchNamespace: { method: 'GET', path: '/api/auth/token/{tenant}' },
  samlUrl: { method: 'GET', path: '/api/user/saml/auth' },
  updateUser: { method: 'PATCH', path: '/api/users' },
  mfaAuth: { method: 'POST', path: '/api/user/mfa/auth' },
  mfaRecover: { method: 'POST', path: '/api/user/mfa/recover' },
  mfaGenerate: { method: 'GET', path: '/api/user/mfa/generate' },
  mfaEnable: { method: 'PUT', path: '/api/user/mfa/enable' },
  mfaDisable: { method: 'PUT', path: '/api/user/mfa/disable' },

  stats: { method: 'GET', path: '/api/stats' },
  listDevices: { method: 'GET', path: '/api/devices' },
  getDevice: { method: 'GET', path: '/api/devices/{uid}' },
  updateDevice: { method: 'PUT', path: '/api/devices/{uid}' },
  deleteDevice: { method: 'DELETE', path: '/api/devices/{uid}' },
  acceptDevice: { method: 'PATCH', path: '/api/devices/{uid}/accept' },
  setDeviceStatus: { method: 'PATCH', path: '/api/devices/{uid}/{status}' },
  setDeviceTags: { method: 'PUT', path: '/api/devices/{uid}/tags' },
  listTunnels: { method: 'GET', path: '/api/devices/{uid}/tunnels' },
  createTunnel: { method: 'POST', path: '/api/devices/{uid}/tunnels' },
  deleteTunnel: { method: 'DELETE', path: '/api/devices/{uid}/tunnels/{address}' },

  listContainers: { method: 'GET', path: '/api/containers' },
  getContainer: { method: 'GET', path: '/api/containers/{uid}' },
  updateContainer: { method: 'PUT', path: '/api/containers/{uid}' },
  deleteContainer: { method: 'DELETE', path: '/api/containers/{uid}' },
  acceptContainer: { method: 'PATCH', path: '/api/containers/{uid}/accept' },
  setContainerStatus: { method: 'PATCH', path: '/api/containers/{uid}/{status}' },
  setContainerTags: { method: 'PUT', path: '/api/containers/{uid}/tags' },

  listTags: { method: 'GET', path: '/api/tags' },
  renameTag: { method: 'PUT', path: '/api/tags/{tag}' },
  deleteTag: { method: 'DELETE', path: '/api/tags/{tag}' },

  listSessions: { method: 'GET', path: '/api/sessions' },
  getSession: { method: 'GET', path: '/api/sessions/{uid}' },
  getRecording: { method: 'GET', path: '/api/sessions/{uid}/records/{seat}' },
  terminalTicket: { method: 'POST', path: '/api/terminal/tickets' },

  adminListUsers: { method: 'GET', path: '/api/admin/users' },
  adminCreateUser: { method: 'POST', path: '/api/admin/users' },
  adminUpdateUser: { method: 'PATCH', path: '/api/admin/users/{user}' },
  adminSetPassword: { method: 'PUT', path: '/api/admin/users/{user}/password' },
  adminListNamespaces: { method: 'GET', path: '/api/admin/namespaces' },
  adminHealth: { method: 'GET', path: '/api/admin/health' },

  listPublicKeys: { method: 'GET', path: '/api/sshkeys/public-keys' },
  createPublicKey: { method: 'POST', path: '/api/sshkeys/public-keys' },
  updatePublicKey: { method: 'PUT', path: '/api/sshkeys/public-keys/{fingerprint}' },
  deletePublicKey: { method: 'DELETE', path: '/api/sshkeys/public-keys/{fingerprint}' },

  listFirewallRules: { method: 'GET', path: '/api/firewall/rules' },
  createFirewallRule: { method: 'POST', path: '/api/firewall/rules' },
  updateFirewallRule: { method: 'PUT', path: '/api/firewall/rules/{id}' },
  deleteFirewallRule: { method: 'DELETE', path: '/api/firewall/rules/{id}' },

  listNamespaces: { method: 'GET', path: '/api/namespaces' },
  createNamespace: { method: 'POST', path: '/api/namespaces' },
  getNamespace: { method: 'GET', path: '/api/namespaces/{tenant}' },
  updateNamespace: { method: 'PUT', path: '/api/namespaces/{tenant}' },
  deleteNamespace: { method: 'DELETE', path: '/api/namespaces/{tenant}' },
  addMember: { method: 'POST', path: '/api/namespaces/{tenant}/members' },
  updateMember: { method: 'PATCH', path: '/api/namespaces/{tenant}/members/{uid}' },
  removeMember: { method: 'DELETE', path: '/api/namespaces/{tenant}/members/{uid}' },
  leaveNamespace: { method: 'DELETE', path: '/api/namespaces/{tenant}/members' },
  supportIdentifier: { method: 'GET', path: '/api/namespaces/{tenant}/support' },
  setSessionRecord: { method: 'PUT', path: '/api/users/security/{tenant}' },

  listApiKeys: { method: 'GET', path: '/api/namespaces/api-key' },
  createApiKey: { method: 'POST', path: '/api/namespaces/api-key' },
  updateApiKey: { method: 'PATCH', path: '/api/namespaces/api-key/{key}' },
  deleteApiKey: { method: 'DELETE', path: '/api/namespaces/api-key/{key}' },

  listConnectors: { method: 'GET', path: '/api/connector' },
  createConnector: { method: 'POST', path: '/api/connector' },
  deleteConnector: { method: 'DELETE', path: '/api/connector/{uid}' },

  getSubscription: { method: 'GET', path: '/api/billing/subscription' },
} as const satisfies Record<string, Call>;

export type CallName = keyof typeof calls;
