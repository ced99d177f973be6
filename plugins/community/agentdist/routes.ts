import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  agentDistDir,
  BUNDLE_ARCHITECTURES,
  bundleFileName,
  installScriptPath,
} from '@gatehouse/agent/packaging/bundle';
import { defineRoute, HttpError } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';

/** The tarball install.sh asks for was never built on this server (agent/dist is made by the agent's build). */
export class AgentBundleMissing extends HttpError {
  constructor(file: string) {
    super(404, `${file} is not built on this server: run "npm run build -w agent" in the server's checkout`);
  }
}

const errorBody = T.Object({ message: T.String() });

/**
 * What the documented one-line agent install downloads from the server itself:
 * `curl -fsSL "$SERVER/agent/install.sh" | sudo GATEHOUSE_SERVER_ADDRESS="$SERVER" GATEHOUSE_TENANT_ID=<tenant> sh`
 * fetches the installer, which then fetches the agent tarball for the device's architecture. Both are public:
 * the agent is only useful with a tenant id, and the device still waits for acceptance in its namespace.
 */
export const agentDistRoutes = [
  defineRoute({
    method: 'GET',
    path: '/agent/install.sh',
    auth: ['none'],
    summary: 'Agent installer script',
    description:
      'POSIX shell script (text/x-shellscript) that installs the device agent from this server as a systemd ' +
      'service. Run it as root with GATEHOUSE_SERVER_ADDRESS and GATEHOUSE_TENANT_ID set.',
    tags: ['agent'],
    schema: { response: { 200: null } },
    async handler({ ctx }) {
      ctx.type = 'text/x-shellscript; charset=utf-8';
      return readFile(installScriptPath, 'utf8');
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/agent/gatehouse-agent-linux-:arch.tar.gz',
    auth: ['none'],
    summary: 'Agent bundle for one architecture',
    description:
      'The installable agent (application/gzip tarball of /opt/gatehouse-agent) as built on this server by ' +
      '`npm run build -w agent`; 404 when it was not built.',
    tags: ['agent'],
    schema: {
      params: T.Object({ arch: T.Union(BUNDLE_ARCHITECTURES.map((arch) => T.Literal(arch))) }),
      response: { 200: null, 404: errorBody },
    },
    async handler({ params, ctx }) {
      const file = bundleFileName(params.arch);
      const path = join(agentDistDir, file);
      const found = await stat(path).catch(() => undefined);
      if (!found?.isFile()) throw new AgentBundleMissing(file);
      ctx.type = 'application/gzip';
      ctx.length = found.size;
      ctx.attachment(file);
      return createReadStream(path);
    },
  }),
];
