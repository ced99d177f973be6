/** Sent to the server in `GET /info?agent_version=` and `info.version`; kept equal to package.json. */
export const AGENT_VERSION = '0.3.0';
