import type { Duplex } from 'node:stream';
import type { TunnelHub } from '../../plugins/community/agent-tunnels/hub';

/**
 * The server's end of a device's tunnel streams. The hub keeps them private; tests read how many there are and how
 * much each holds unsent, which no API shows.
 */
export function tunnelStreams(hub: TunnelHub, uid: string): Duplex[] {
  const { tunnels } = hub as unknown as {
    tunnels: Map<string, { session: { streams: Map<number, Duplex> } }>;
  };
  return [...(tunnels.get(uid)?.session.streams.values() ?? [])];
}
