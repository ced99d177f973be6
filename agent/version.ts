import product from '../package.json' with { type: 'json' };

/**
 * The product version, from the repository's root package.json: the one number every artifact carries (the server's
 * `/info`, `gatehouse --version`, the agent's log and `--version`, the release files). Sent to the server in
 * `GET /info?agent_version=` and `info.version`; the agent's build inlines it.
 */
export const AGENT_VERSION: string = product.version;
