/** @gatehouse/agent: the tunnel multiplexer both ends use, and the agent's building blocks. */
export * from './mux';
export type { DeviceAuthRequest, DeviceAuthResult, ServerInfo } from './registration';
export {
  type GatewaySigner,
  type GatewaySignRequest,
  md5Fingerprint,
  verifyGatewaySignature,
} from './ssh/gateway-key';
export { AGENT_VERSION } from './version';
