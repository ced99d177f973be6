import type { InstanceInfo } from '@gatehouse/console';
import type { Device } from '../types';

/** Splits the SSH endpoint from GET /info ("host:port", or a bare host) into host and port. */
export function sshEndpoint(info: InstanceInfo): { host: string; port: number } {
  const raw = info.endpoints.ssh || `${window.location.hostname}:2222`;
  const match = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(raw.replace(/^ssh:\/\//, ''));
  const host = match?.[1] && match[1] !== '0.0.0.0' ? match[1] : window.location.hostname;
  return { host, port: match?.[2] ? Number(match[2]) : 22 };
}

/** Users type `ssh <device-user>@<namespace>.<device-name>@<host> -p <port>`. */
export function sshCommand(info: InstanceInfo, device: Device, deviceUser = 'root'): string {
  const { host, port } = sshEndpoint(info);
  const target = device.namespace ? `${device.namespace}.${device.name}` : device.uid;
  return `ssh ${port === 22 ? '' : `-p ${port} `}${deviceUser}@${target}@${host}`;
}

export function sshTarget(device: Device, deviceUser: string): string {
  return device.namespace
    ? `${deviceUser}@${device.namespace}.${device.name}`
    : `${deviceUser}@${device.uid}`;
}
