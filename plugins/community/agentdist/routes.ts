import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { defineRoute, HttpError, type Instance } from '@gatehouse/core';
import {
  AGENT_ASSETS,
  agentImageDistName,
  BUNDLE_ARCHITECTURES,
  bundleFileName,
  executableFileName,
} from '@gatehouse/protocol/distribution';
import { Type as T } from '@sinclair/typebox';

/** The tarball install.sh asks for was never built on this server (agent/dist is made by the agent's build). */
export class AgentBundleMissing extends HttpError {
  constructor(file: string) {
    super(
      404,
      file.endsWith('.tar.gz')
        ? `${file} is not built on this server: run "npm run build -w agent" in the server's checkout`
        : `${file} is not built on this server: run "npm run release" in the server's checkout`,
    );
  }
}

const errorBody = T.Object({ message: T.String() });

/**
 * What the documented one-line agent install downloads from the server itself:
 * `curl -fsSL "$SERVER/agent/install.sh" | GATEHOUSE_SERVER_ADDRESS="$SERVER" GATEHOUSE_TENANT_ID=<tenant> sh`
 * fetches the installer, which then fetches the agent's executable for the device's architecture and the service
 * file of its init system (the tarball is the same agent for a device's own Node.js). All are public: the agent is
 * only useful with a tenant id, and the device still waits for acceptance in its namespace.
 */
export const agentDistRoutes = [
  defineRoute({
    method: 'GET',
    path: '/agent/install.sh',
    auth: ['none'],
    summary: 'Agent installer script',
    description:
      'POSIX shell script (text/x-shellscript) that installs the device agent from this server as a systemd or ' +
      'OpenRC service. Run it as root (or a sudoer) with GATEHOUSE_SERVER_ADDRESS and GATEHOUSE_TENANT_ID set.',
    tags: ['agent'],
    schema: { response: { 200: null } },
    async handler({ ctx, services }) {
      ctx.type = 'text/x-shellscript; charset=utf-8';
      return readFile(asset(services.instance, 'installScript', 'install.sh'), 'utf8');
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
    handler: ({ params, ctx, services }) =>
      sendBuild(services.instance, ctx, bundleFileName(params.arch), 'application/gzip'),
  }),
  defineRoute({
    method: 'GET',
    path: '/agent/gatehouse-agent-image-linux-:arch.tar.gz',
    auth: ['none'],
    summary: 'Agent container image for one architecture',
    description:
      "The agent image (gzip'd docker-archive for `gunzip | docker load` or `gunzip | podman load`, named " +
      '`localhost/gatehouse-agent:<version>`) as built on this server by `npm run release`; 404 when it was not built.',
    tags: ['agent'],
    schema: {
      params: T.Object({ arch: T.Literal('amd64') }),
      response: { 200: null, 404: errorBody },
    },
    handler: ({ params, ctx, services }) =>
      sendBuild(services.instance, ctx, agentImageDistName(params.arch), 'application/gzip'),
  }),
  // After the tarball's route: this pattern also matches `...-amd64.tar.gz`, which that one answers first.
  defineRoute({
    method: 'GET',
    path: '/agent/gatehouse-agent-linux-:arch',
    auth: ['none'],
    summary: 'Agent executable for one architecture',
    description:
      'The single-executable agent (application/octet-stream; needs no Node.js on the device) as built on this ' +
      'server by `npm run release` or agent/build-executable.ts; 404 when it was not built.',
    tags: ['agent'],
    schema: {
      params: T.Object({ arch: T.Union(BUNDLE_ARCHITECTURES.map((arch) => T.Literal(arch))) }),
      response: { 200: null, 404: errorBody },
    },
    handler: ({ params, ctx, services }) =>
      sendBuild(services.instance, ctx, executableFileName(params.arch), 'application/octet-stream'),
  }),
  defineRoute({
    method: 'GET',
    path: '/agent/gatehouse-agent.:init',
    auth: ['none'],
    summary: 'Agent service file for an init system',
    description:
      'What install.sh installs to start the agent: the systemd unit (`service`) or the OpenRC script (`openrc`), ' +
      'as text.',
    tags: ['agent'],
    schema: {
      params: T.Object({ init: T.Union([T.Literal('service'), T.Literal('openrc')]) }),
      response: { 200: null },
    },
    async handler({ params, ctx, services }) {
      ctx.type = 'text/plain; charset=utf-8';
      const which = params.init === 'service' ? 'service' : 'openrc';
      return readFile(asset(services.instance, which, `gatehouse-agent.${params.init}`), 'utf8');
    },
  }),
];

/** Where the host says one of the agent's files is; 404 when this installation has none. */
function asset(instance: Instance, name: keyof typeof AGENT_ASSETS, file: string): string {
  const path = instance.assets[AGENT_ASSETS[name]];
  if (!path) throw new HttpError(404, `${file} is not part of this installation`);
  return path;
}

/** Streams a file of the agent's build output, or answers 404 naming the build that makes it. */
async function sendBuild(
  instance: Instance,
  ctx: { type: string; length: number; compress?: boolean | object; attachment(name: string): void },
  file: string,
  type: string,
) {
  const path = join(asset(instance, 'dist', file), file);
  const found = await stat(path).catch(() => undefined);
  if (!found?.isFile()) throw new AgentBundleMissing(file);
  ctx.type = type;
  ctx.length = found.size;
  // Sent as stored: the archives are gzip already, and compressing a 100 MiB executable for every anonymous
  // download would cost the server seconds of CPU each (a request anyone can repeat).
  ctx.compress = false;
  ctx.attachment(file);
  return createReadStream(path);
}
