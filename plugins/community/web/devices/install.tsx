import { CopyField } from '@gatehouse/console';

// The one-line agent install the server itself serves (GET /agent/install.sh, plugins/community/agentdist), with
// this namespace's tenant filled in, and the same agent in a stock Node.js container for Docker hosts.

/** The address this console is open at: the server the agent must reach. */
export function serverAddress(location: Pick<Location, 'origin'> = window.location): string {
  return location.origin;
}

export function installCommand(server: string, tenant: string): string {
  return `curl -fsSL "${server}/agent/install.sh" | sudo GATEHOUSE_SERVER_ADDRESS="${server}" GATEHOUSE_TENANT_ID=${tenant} sh`;
}

/**
 * The agent in Docker: the official `node:20` image downloads the server's own agent bundle for its architecture
 * and runs it; the key stays in a volume, so a recreated container is still the same device.
 */
export function dockerCommand(server: string, tenant: string): string {
  return [
    'docker run -d --name gatehouse-agent --restart unless-stopped',
    `-e GATEHOUSE_SERVER_ADDRESS="${server}" -e GATEHOUSE_TENANT_ID=${tenant}`,
    '-e GATEHOUSE_PRIVATE_KEY=/var/lib/gatehouse-agent/agent.key -v gatehouse-agent:/var/lib/gatehouse-agent',
    `node:20 sh -c '${agentInContainer}'`,
  ].join(' ');
}

/** What the container runs (also run as is, outside Docker, by the console's tests). */
export const agentInContainer =
  'curl -fsSL "$GATEHOUSE_SERVER_ADDRESS/agent/gatehouse-agent-linux-$(dpkg --print-architecture).tar.gz" | tar -xz -C /opt && exec node --initial-old-space-size=64 /opt/gatehouse-agent/gatehouse-agent.mjs';

/** Both commands with Copy buttons, for Home and an empty Devices list. */
export function InstallCommands({ tenant }: { tenant: string }) {
  const server = serverAddress();
  return (
    <div className="stack" style={{ gap: 8 }}>
      <span className="label">On a Linux machine with Node.js 20 or newer, as root:</span>
      <CopyField label="install command" value={installCommand(server, tenant)} wrap />
      <span className="label">Or with Docker:</span>
      <CopyField label="docker run command" value={dockerCommand(server, tenant)} wrap />
      <span className="hint muted" style={{ fontSize: 12.5 }}>
        The device then waits under Devices → Pending until you accept it. To sign in with a password inside
        the container, add <code>-e GATEHOUSE_SINGLE_USER_PASSWORD=…</code>; public keys work without.
      </span>
    </div>
  );
}
