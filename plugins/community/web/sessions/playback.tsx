import '@xterm/xterm/css/xterm.css';
import { Button, icons, type RecordedEntry } from '@gatehouse/web/shell';
import { Terminal } from '@xterm/xterm';
import { useCallback, useEffect, useRef, useState } from 'react';

// Plays a recorded seat back in the browser at its original pace (or faster), in a read-only terminal.

const speeds = [1, 2, 4, 8];
/** Long idle gaps are shortened so a recording of an idle shell does not play for hours. */
const maxGapMs = 2000;

export interface Frame {
  at: number;
  data: string;
  width: number;
  height: number;
}

export function framesOf(entries: RecordedEntry[]): Frame[] {
  const sorted = [...entries].sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
  const first = sorted[0] ? Date.parse(sorted[0].time) : 0;
  let shift = 0;
  let previous = first;
  return sorted.map((e) => {
    const time = Date.parse(e.time);
    shift += Math.max(0, time - previous - maxGapMs);
    previous = time;
    return { at: time - first - shift, data: e.message, width: e.width, height: e.height };
  });
}

export function Playback({ entries }: { entries: RecordedEntry[] }) {
  const host = useRef<HTMLElement>(null);
  const termRef = useRef<Terminal | null>(null);
  const timers = useRef<number[]>([]);
  const [playing, setPlaying] = useState(false);
  const [done, setDone] = useState(false);
  const [speed, setSpeed] = useState(1);
  const frames = useRef<Frame[]>([]);
  frames.current = framesOf(entries);
  const duration = frames.current.at(-1)?.at ?? 0;

  useEffect(() => {
    if (!host.current) return;
    const first = frames.current[0];
    const term = new Terminal({
      cols: first?.width || 80,
      rows: first?.height || 24,
      disableStdin: true,
      fontSize: 13,
      fontFamily: 'ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace',
      theme: { background: '#0b0e13', foreground: '#e6ebf2' },
    });
    term.open(host.current);
    termRef.current = term;
    return () => {
      for (const t of timers.current) clearTimeout(t);
      term.dispose();
    };
  }, []);

  const stop = useCallback(() => {
    for (const t of timers.current) clearTimeout(t);
    timers.current = [];
    setPlaying(false);
  }, []);

  const play = useCallback(() => {
    const term = termRef.current;
    if (!term) return;
    stop();
    term.reset();
    setDone(false);
    setPlaying(true);
    for (const frame of frames.current) {
      timers.current.push(
        window.setTimeout(() => {
          if (frame.width && frame.height && (frame.width !== term.cols || frame.height !== term.rows)) {
            term.resize(frame.width, frame.height);
          }
          term.write(frame.data);
        }, frame.at / speed),
      );
    }
    timers.current.push(
      window.setTimeout(
        () => {
          setPlaying(false);
          setDone(true);
        },
        duration / speed + 20,
      ),
    );
  }, [duration, speed, stop]);

  return (
    <div className="stack" style={{ gap: 10 }}>
      <div className="row">
        {playing ? (
          <Button onClick={stop}>{icons.pause} Stop</Button>
        ) : (
          <Button variant="primary" onClick={play}>
            {icons.play} {done ? 'Play again' : 'Play recording'}
          </Button>
        )}
        <label className="row" style={{ gap: 6 }}>
          <span className="muted">Speed</span>
          <select
            className="input"
            style={{ width: 80 }}
            value={speed}
            onChange={(e) => setSpeed(Number(e.target.value))}
          >
            {speeds.map((s) => (
              <option key={s} value={s}>
                {s}×
              </option>
            ))}
          </select>
        </label>
        <span className="muted" role="status">
          {playing
            ? 'Playing…'
            : done
              ? 'Finished'
              : `${Math.max(1, Math.round(duration / 1000))} s recorded`}
        </span>
      </div>
      <section
        className="terminal-shell"
        style={{ height: 'auto', minHeight: 200, overflowX: 'auto' }}
        ref={host}
        data-testid="playback"
        aria-label="Recorded terminal output"
      />
    </div>
  );
}
