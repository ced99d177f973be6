// The one-line agent install the server itself serves (GET /agent/install.sh, plugins/community/agentdist), with
// this namespace's tenant filled in, and the agent image the server hands out for Docker hosts. The docs show the
// same commands (test/packaging/docs-commands.test.ts holds them to it).

/** The address this console is open at: the server the agent must reach. */
export function serverAddress(location: Pick<Location, 'origin'> = window.location): string {
  return location.origin;
}

const keyVariable = (installKey?: string) => (installKey ? ` GATEHOUSE_INSTALL_KEY=${installKey}` : '');

/** The installer as root (or a sudoer): it installs the agent's executable and starts it with systemd or OpenRC. */
export function installCommand(server: string, tenant: string, installKey?: string): string {
  return `curl -fsSL "${server}/agent/install.sh" | GATEHOUSE_SERVER_ADDRESS="${server}" GATEHOUSE_TENANT_ID=${tenant}${keyVariable(installKey)} sh`;
}

/**
 * The agent in Docker: the agent image (the single executable, no Node.js) loaded from this server, then run with
 * the key in a volume, so a recreated container is still the same device.
 */
export function dockerCommand(server: string, tenant: string, version: string, installKey?: string): string {
  return [
    `curl -fsSL "${server}/agent/gatehouse-agent-image-linux-amd64.tar.gz" | gunzip | docker load &&`,
    'docker run -d --name gatehouse-agent --restart unless-stopped',
    `-e GATEHOUSE_SERVER_ADDRESS="${server}" -e GATEHOUSE_TENANT_ID=${tenant}${installKey ? ` -e GATEHOUSE_INSTALL_KEY=${installKey}` : ''}`,
    `-v gatehouse-agent:/var/lib/gatehouse-agent localhost/gatehouse-agent:${version}`,
  ].join(' ');
}
