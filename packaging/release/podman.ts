import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Podman settings that work on hosts without systemd or journald and with cgroup v1/v2 layouts crun rejects: runc,
 * cgroupfs, events in a file, file locks and every runtime folder under `dir`, bounded ulimits, the CNI network
 * backend (Debian 12's podman). `netns` is the network of a container run without `--network`; builds run without
 * one either way. Answers the environment that points podman at these files.
 */
export function podmanSettings(dir: string, netns: 'none' | 'bridge' = 'none'): Record<string, string> {
  mkdirSync(dir, { recursive: true });
  const conf = path.join(dir, 'containers.conf');
  writeFileSync(
    conf,
    `[containers]
netns = "${netns}"
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
log_driver = "k8s-file"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "${dir}/events.log"
lock_type = "file"
tmp_dir = "${dir}/tmp"
volume_path = "${dir}/volumes"
static_dir = "${dir}/libpod"
[network]
network_backend = "cni"
network_config_dir = "${dir}/cni"
`,
  );
  const storage = path.join(dir, 'storage.conf');
  writeFileSync(
    storage,
    `[storage]
driver = "overlay"
runroot = "${dir}/run"
graphroot = "${dir}/root"
`,
  );
  return { CONTAINERS_CONF: conf, CONTAINERS_STORAGE_CONF: storage };
}

export type Podman = (...args: string[]) => Promise<string>;

/** The podman command line with these settings (what someone on such a host types, with its environment). */
export function podmanCli(env: Record<string, string>, timeoutMs = 600_000): Podman {
  return async (...args) => {
    const { stdout } = await run('/usr/bin/podman', args, {
      env: { ...process.env, ...env },
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout.trim();
  };
}
