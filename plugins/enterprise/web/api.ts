// The enterprise plugin's HTTP calls; test/e2e/web/api-contract.test.ts checks them against the server's OpenAPI
// document.
export const calls = {
  samlUrl: { method: 'GET', path: '/api/user/saml/auth' },
  samlToken: { method: 'POST', path: '/api/user/saml/token' },
  samlLogout: { method: 'POST', path: '/api/user/saml/logout' },
  samlSettings: { method: 'GET', path: '/api/admin/saml' },
  saveSamlSettings: { method: 'PUT', path: '/api/admin/saml' },
  listConnectors: { method: 'GET', path: '/api/connector' },
  createConnector: { method: 'POST', path: '/api/connector' },
  updateConnector: { method: 'PATCH', path: '/api/connector/{uid}' },
  deleteConnector: { method: 'DELETE', path: '/api/connector/{uid}' },
  getConnectorInfo: { method: 'GET', path: '/api/connector/{uid}/info' },
  newConnectorToken: { method: 'POST', path: '/api/connector/{uid}/token' },
} as const;
