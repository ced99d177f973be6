import type { RecordEntry } from './schemas';

/**
 * A recorded seat as asciicast v2 (https://docs.asciinema.org/manual/asciicast/v2/): a JSON header line, then one
 * `[seconds, "o", text]` line per output entry and `[seconds, "r", "WxH"]` where the terminal size changed, so
 * `asciinema play` and the asciinema web player replay it as it was shown.
 */
export function toAsciicast(entries: RecordEntry[], meta: { term?: string; title?: string } = {}): string {
  const first = entries[0];
  const start = first ? Date.parse(first.time) : Date.now();
  const header = {
    version: 2,
    width: first?.width || 80,
    height: first?.height || 24,
    timestamp: Math.floor(start / 1000),
    ...(meta.title ? { title: meta.title } : {}),
    env: { TERM: meta.term || 'xterm', SHELL: '/bin/sh' },
  };
  const lines = [JSON.stringify(header)];
  let width = header.width;
  let height = header.height;
  for (const e of entries) {
    const at = Math.max(0, (Date.parse(e.time) - start) / 1000);
    const t = Number(at.toFixed(6));
    if (e.width && e.height && (e.width !== width || e.height !== height)) {
      width = e.width;
      height = e.height;
      lines.push(JSON.stringify([t, 'r', `${width}x${height}`]));
    }
    if (e.message) lines.push(JSON.stringify([t, 'o', e.message]));
  }
  return `${lines.join('\n')}\n`;
}
