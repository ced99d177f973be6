import type { Logger, SecretBox } from '@gatehouse/core';
import {
  type SessionRequest,
  type SshDevice,
  type TargetSession,
  type TunnelHub,
  type Upstream,
  type UpstreamAuth,
  type UpstreamDialer,
  UpstreamRefused,
} from '@gatehouse/plugin-community';
import { type LocalAccount, parsePasswd, verifyPasswordIn } from '@gatehouse/protocol/accounts';
import type Docker from 'dockerode';
import type { Knex } from 'knex';
import type { ContainerDevices } from './containers';
import { engineClient } from './engine';
import { ContainerExec, readContainerFile } from './exec';
import { Connector } from './model';
import { connectorLink } from './service';

/**
 * The gateway's upstream for containers a connector exposes: no agent runs inside, so sessions run as interactive
 * execs through the container engine's API (`ssh user@namespace.container@gateway`, and the web terminal).
 *
 * Sign-in is checked against the container itself, as an agent checks it against its device: a password against
 * the container's /etc/shadow, read through the engine (crypt(3), so the schemes a container writes are all
 * understood); a public key is one of the namespace's keys for this user and container (the gateway checked it and
 * vouches with its own key). Either way the user must be an account of the container's /etc/passwd, and the
 * session runs as that account (uid, gid, home, shell).
 */
export class ContainerDialer implements UpstreamDialer {
  private readonly db: Knex;
  private readonly secrets: SecretBox;
  private readonly devices: ContainerDevices;
  private readonly log: Logger;
  private readonly tunnels: TunnelHub;

  constructor(deps: {
    db: Knex;
    secrets: SecretBox;
    containerDevices: ContainerDevices;
    connectorTunnels: TunnelHub;
    log: Logger;
  }) {
    this.db = deps.db;
    this.secrets = deps.secrets;
    this.devices = deps.containerDevices;
    this.tunnels = deps.connectorTunnels;
    this.log = deps.log.child({ part: 'container-sessions' });
  }

  reaches(device: SshDevice): boolean {
    return device.kind === 'container';
  }

  /** Online while its connector is enabled, the container runs, and the watcher saw it lately. */
  async online(device: SshDevice): Promise<boolean> {
    const located = await this.devices.locate(device.uid);
    return Boolean(located?.running && device.online);
  }

  async dial(device: SshDevice, user: string, auth: UpstreamAuth): Promise<Upstream> {
    const located = await this.devices.locate(device.uid);
    if (!located?.running) throw new Error('the container is not running');
    const connector = await Connector.acrossTenants(this.db)
      .findById(located.connectorUid)
      .where('tenant_id', device.tenant_id);
    if (!connector) throw new Error('the connector of this container is gone');
    // Through the connector's tunnel, on whichever instance holds it.
    const docker = engineClient(connectorLink(connector, this.secrets, this.tunnels));
    const passwd = (await readContainerFile(docker, located.containerId, '/etc/passwd')) ?? '';
    let account: LocalAccount | undefined;
    if ('password' in auth) {
      const shadow = (await readContainerFile(docker, located.containerId, '/etc/shadow')) ?? '';
      account = await verifyPasswordIn({ passwd, shadow }, user, auth.password);
    } else {
      // `gatewayKey`: the gateway verified a namespace public key allowed for this user and container.
      account = parsePasswd(passwd).find((a) => a.name === user);
    }
    if (!account)
      throw new UpstreamRefused(`no such account, or the password is wrong, in container ${device.name}`);
    return new ContainerUpstream(docker, located.containerId, account, this.log);
  }
}

/** One signed-in user in one container: each session channel is an exec of its own. */
class ContainerUpstream implements Upstream {
  private readonly sessions = new Set<ContainerExec>();
  private readonly closes: (() => void)[] = [];
  private ended = false;

  constructor(
    private readonly docker: Docker,
    private readonly containerId: string,
    private readonly account: LocalAccount,
    private readonly log: Logger,
  ) {}

  async open(request: SessionRequest): Promise<TargetSession> {
    if (this.ended) throw new Error('the connection is closed');
    const { command } = request;
    if (command.kind === 'subsystem') {
      throw new Error(`the ${command.name} subsystem is not available in containers (no agent runs inside)`);
    }
    // As sshd does: a login shell for `shell`, the command through the account's shell for `exec`.
    const argv =
      command.kind === 'shell' ? [this.account.shell, '-l'] : [this.account.shell, '-c', command.command];
    const env = { ...request.env, ...(request.pty ? { TERM: request.pty.term || 'xterm' } : {}) };
    const session = await ContainerExec.start(this.docker, this.containerId, {
      argv,
      account: this.account,
      env,
      ...(request.pty ? { tty: { cols: request.pty.cols, rows: request.pty.rows } } : {}),
    });
    this.sessions.add(session);
    session.onClose(() => this.sessions.delete(session));
    return session;
  }

  onClose(listener: () => void): void {
    this.closes.push(listener);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const session of this.sessions) session.close();
    this.log.debug({ container: this.containerId }, 'container connection ended');
    for (const listener of this.closes.splice(0)) listener();
  }
}
