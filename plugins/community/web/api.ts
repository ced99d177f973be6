// Every HTTP call the community plugin's screens make, as data. The shell's client builds
// requests from an entry; test/e2e/web/api-contract.test.ts checks each one against the server's OpenAPI document.
// Signing in and switching namespace are the shell's own calls (`sessionCalls`).
export const calls = {
  updateUser: { method: 'PATCH', path: '/api/users' },
  mfaGenerate: { method: 'GET', path: '/api/user/mfa/generate' },
  mfaEnable: { method: 'PUT', path: '/api/user/mfa/enable' },
  mfaDisable: { method: 'PUT', path: '/api/user/mfa/disable' },

  stats: { method: 'GET', path: '/api/stats' },
  events: { method: 'GET', path: '/api/events' },
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
  closeSession: { method: 'POST', path: '/api/sessions/{uid}/close' },
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

  listInstallKeys: { method: 'GET', path: '/api/namespaces/install-keys' },
  createInstallKey: { method: 'POST', path: '/api/namespaces/install-keys' },
  rotateInstallKey: { method: 'POST', path: '/api/namespaces/install-keys/{id}/rotate' },
  revokeInstallKey: { method: 'DELETE', path: '/api/namespaces/install-keys/{id}' },
} as const;
