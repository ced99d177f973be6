/**
 * @gatehouse/agent: the device agent (`gatehouse-agent`) and the connector (`gatehouse-agent connector`). No server
 * package imports it: what the agent and the server share is @gatehouse/protocol.
 */
export { ConnectorAgent } from './connector';
export { DeviceAgent } from './device-agent';
export type { DeviceAuthRequest, DeviceAuthResult, ServerInfo } from './registration';
export { AGENT_VERSION } from './version';
