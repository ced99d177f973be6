// The commands the docs give for installing from the release, word for word. The packaging tests run these strings
// (with the test's own ports and addresses put in for the placeholders), and docs-commands.test.ts checks that each
// page shows them exactly, so the docs and what is tested never drift apart.
import { version } from './release';

export const documented = {
  // Getting started: the server image, then the agent image on a device.
  serverImageLoad: `podman load -i gatehouse-server-${version}-amd64.image.tar`,
  serverImageRun:
    'podman run -d --name gatehouse -p 8080:8080 -p 2222:2222 -v gatehouse-data:/var/lib/gatehouse ' +
    `-e GATEHOUSE_PUBLIC_URL=http://<server-host>:8080 localhost/gatehouse-server:${version}`,
  firstUser:
    "podman exec gatehouse gatehouse user create --username ada --email ada@example.com --password 'change-me-now' --admin",
  firstNamespace: 'podman exec gatehouse gatehouse namespace create --name acme --owner ada',
  agentImageLoad: `podman load -i gatehouse-agent-${version}-amd64.image.tar`,
  agentImageRun:
    'podman run -d --name gatehouse-agent --restart unless-stopped ' +
    '-e GATEHOUSE_SERVER_ADDRESS=http://<server-host>:8080 -e GATEHOUSE_TENANT_ID=<tenant-id> ' +
    `-v gatehouse-agent:/var/lib/gatehouse-agent localhost/gatehouse-agent:${version}`,
  ssh: 'ssh -p 2222 root@acme.<device-name>@<server-host>',
  // Getting started: compose.
  composeUp: 'podman-compose up -d',
  composeFirstUser:
    "podman-compose exec gatehouse gatehouse user create --username ada --email ada@example.com --password 'change-me-now' --admin",
  composeDown: 'podman-compose down',
  // Getting started: the npm package.
  npmInstall: `npm install -g ./gatehouse-${version}.tgz`,
  serve: 'gatehouse serve',
  docsServe: 'gatehouse-docs --port 3000',
  // Installing the agent.
  installScript:
    'curl -fsSL "$SERVER/agent/install.sh" | GATEHOUSE_SERVER_ADDRESS="$SERVER" GATEHOUSE_TENANT_ID=<tenant-id> sh',
  noInitStart: "sh -c 'set -a; . /etc/default/gatehouse-agent; exec /usr/local/bin/gatehouse-agent'",
  debInstall: `apt install ./gatehouse-agent_${version}_amd64.deb`,
  debStart: 'systemctl enable --now gatehouse-agent',
} as const;

/** Which page shows which of them. */
export const pages: Record<string, (keyof typeof documented)[]> = {
  'overview/getting-started/index.md': [
    'serverImageLoad',
    'serverImageRun',
    'firstUser',
    'firstNamespace',
    'agentImageLoad',
    'agentImageRun',
    'ssh',
    'composeUp',
    'composeFirstUser',
    'npmInstall',
    'serve',
    'docsServe',
    'installScript',
  ],
  'user-guides/devices/adding.md': ['installScript'],
  'developers/agent/installing.md': [
    'installScript',
    'noInitStart',
    'debInstall',
    'debStart',
    'agentImageRun',
  ],
  'self-hosted/deploying.md': ['serverImageRun', 'composeUp', 'composeDown'],
};

/** A documented command with the test's values in place of its placeholders. */
export function filled(command: string, values: Record<string, string>): string {
  let out = command;
  for (const [placeholder, value] of Object.entries(values)) out = out.replaceAll(placeholder, value);
  return out;
}
