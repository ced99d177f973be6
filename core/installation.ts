/**
 * What the host tells the kernel about the installation it runs in. Core knows the plugin contract and no
 * repository layout, no edition and no plugin: the host (`server/`) says where the configuration files and the
 * console are, which editions there are and what version this is.
 */
export interface Installation {
  /** The folder of `default.yaml` and of one `<edition>.yaml` per edition (its plugin list and defaults). */
  configDir: string;
  /** The editions there are, in the order messages list them; the `edition` setting must name one. */
  editions: readonly string[];
  /** The editions whose OpenAPI documents every server publishes, at `/openapi/<edition>.json`. */
  publishedEditions: readonly string[];
  /** The console shell's built folder (`index.html` and its assets), served at `/`; absent, no console is served. */
  consoleDir: string;
  /** The product version (`GET /info`, the OpenAPI documents, `gatehouse --version`). */
  version: string;
  /**
   * Files and folders of the installation that plugins serve, by a name the plugin and the host agree on (the
   * community plugin serves the agent's builds from `agent-dist` and its installer from `agent-install-script`).
   * Core reads none of them; a plugin answers 404 for one that is not given.
   */
  assets?: Readonly<Record<string, string>>;
}
