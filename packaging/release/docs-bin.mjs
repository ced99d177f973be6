#!/usr/bin/env node
// `gatehouse-docs` of the server package: serves the documentation site it carries, as the public site is served
// (gatehouse-docs --help; --port 3000 and --host 127.0.0.1 by default).
import '../docs/scripts/serve-site.mjs';
