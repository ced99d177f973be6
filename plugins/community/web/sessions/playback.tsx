import '@xterm/xterm/css/xterm.css';
import { Button, icons } from '@gatehouse/console';
import { Terminal } from '@xterm/xterm';
import { useCallback, useEffect, useId, useMemo, useRef, useState } from 'react';
import { loadTerminalFont, TERMINAL_FONT } from '../devices/terminal-font';
import type { RecordedEntry, SessionEvent } from '../types';
import { describeEvent, formatClock } from './describe';

// Plays a recorded seat back in the browser in a read-only terminal: play and pause, a seek bar, the speed, and a
// timeline of when output came and what happened (the session's events) along the same axis.

const speeds = [1, 2, 4, 8];
/** Long idle gaps are shortened so a recording of an idle shell does not play for hours. */
const maxGapMs = 2000;
const TICK_MS = 40;

export interface Frame {
  /** Milliseconds into the playback (idle gaps shortened). */
  at: number;
  /** Milliseconds since epoch when it was recorded. */
  real: number;
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
    return { at: time - first - shift, real: time, data: e.message, width: e.width, height: e.height };
  });
}

/** Escape sequences (CSI, OSC, two-character ones), which move and colour but print nothing. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences start with ESC and BEL ends OSC
const escapes = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]/g;

/** Whether terminal output prints anything a person can read. */
export function visibleText(data: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: what is left once control characters are set aside
  return /[^\s\x00-\x1f\x7f]/.test(data.replace(escapes, ''));
}

/** Where a moment of the session falls on the playback's axis (the same gap shortening as the frames). */
export function playbackTime(frames: Frame[], real: number): number {
  let last: Frame | undefined;
  for (const f of frames) {
    if (f.real > real) break;
    last = f;
  }
  if (!last) return 0;
  return last.at + Math.min(real - last.real, maxGapMs);
}

export function Playback({ entries, events = [] }: { entries: RecordedEntry[]; events?: SessionEvent[] }) {
  const host = useRef<HTMLElement>(null);
  const termRef = useRef<Terminal | null>(null);
  const frames = useMemo(() => framesOf(entries), [entries]);
  const duration = frames.at(-1)?.at ?? 0;
  const [position, setPosition] = useState(0);
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(1);
  const written = useRef(0);
  /**
   * How many frames the screen shows. xterm parses what it is given later and draws on an animation frame, so
   * "Finished" waits for this, not for the last frame to be handed over: it is said once the end is on screen.
   */
  const [shown, setShown] = useState(0);
  /** Bumped when the screen is cleared to go back, so the count of an earlier pass is not taken for this one. */
  const pass = useRef(0);
  const positionRef = useRef(0);
  const seekId = useId();
  /** Bumped each time a terminal is open to draw on. */
  const [ready, setReady] = useState(0);

  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const first = frames[0];
    const term = new Terminal({
      cols: first?.width || 80,
      rows: first?.height || 24,
      disableStdin: true,
      fontSize: 13,
      fontFamily: TERMINAL_FONT,
      theme: { background: '#0b0e13', foreground: '#e6ebf2' },
    });
    let disposed = false;
    void loadTerminalFont(13).then(() => {
      if (disposed) return;
      term.open(element);
      termRef.current = term;
      written.current = 0;
      setReady((n) => n + 1);
    });
    return () => {
      disposed = true;
      termRef.current = null;
      term.dispose();
    };
  }, [frames]);

  /** Brings the screen to `pos`: writes the frames up to it, from the start again when going back. */
  const renderTo = useCallback(
    (pos: number) => {
      const term = termRef.current;
      if (!term) return;
      const shownUpTo = frames[written.current - 1]?.at ?? -1;
      if (pos < shownUpTo) {
        term.reset();
        written.current = 0;
        pass.current++;
        setShown(0);
      }
      let end = written.current;
      while (end < frames.length && (frames[end]?.at ?? 0) <= pos) end++;
      const thisPass = pass.current;
      for (; written.current < end; written.current++) {
        const frame = frames[written.current] as Frame;
        if (frame.width && frame.height && (frame.width !== term.cols || frame.height !== term.rows))
          term.resize(frame.width, frame.height);
        // The step's last frame: once xterm has parsed it, the next animation frame comes after its drawing.
        const drawn =
          written.current === end - 1
            ? () =>
                requestAnimationFrame(() => {
                  if (pass.current === thisPass) setShown(end);
                })
            : undefined;
        term.write(frame.data, drawn);
      }
      positionRef.current = pos;
      setPosition(pos);
    },
    [frames],
  );

  // Before Play, the screen shows the recording up to its first frame that prints something (a shell's first
  // frames are often only terminal modes), not a black box.
  useEffect(() => {
    if (ready === 0) return;
    const first = frames.find((f) => visibleText(f.data)) ?? frames[0];
    renderTo(first?.at ?? 0);
  }, [ready, frames, renderTo]);

  useEffect(() => {
    if (!playing) return;
    let last = performance.now();
    const timer = window.setInterval(() => {
      const now = performance.now();
      const next = Math.min(duration, positionRef.current + (now - last) * speed);
      last = now;
      renderTo(next);
      if (next >= duration) setPlaying(false);
    }, TICK_MS);
    return () => window.clearInterval(timer);
  }, [playing, speed, duration, renderTo]);

  const finished = position >= duration && shown === frames.length && frames.length > 0;
  // Played or sought at least once: the first frame alone on the screen is not a start.
  const [started, setStarted] = useState(false);
  const play = () => {
    if (finished) renderTo(0);
    setStarted(true);
    setPlaying(true);
  };

  const markers = useMemo(
    () =>
      events
        .map((e) => ({ at: playbackTime(frames, Date.parse(e.timestamp)), text: describeEvent(e) }))
        .filter((m) => m.at <= duration),
    [events, frames, duration],
  );
  const percent = (at: number) => `${duration ? (at / duration) * 100 : 0}%`;

  return (
    <div className="stack player" style={{ gap: 10 }}>
      <div className="row player-controls">
        {playing ? (
          <Button onClick={() => setPlaying(false)}>{icons.pause} Pause</Button>
        ) : (
          <Button variant="primary" onClick={play}>
            {icons.play} {finished ? 'Play again' : started ? 'Resume' : 'Play recording'}
          </Button>
        )}
        <span className="mono player-clock" aria-hidden="true">
          {formatClock(position)} / {formatClock(duration)}
        </span>
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
            : finished
              ? 'Finished'
              : started
                ? `Paused at ${formatClock(position)}`
                : `${formatClock(duration)} recorded`}
        </span>
      </div>
      <div className="player-track">
        <label htmlFor={seekId} className="sr-only">
          Position in the recording
        </label>
        <input
          id={seekId}
          className="player-seek"
          type="range"
          min={0}
          max={Math.max(1, Math.ceil(duration))}
          step="any"
          value={position}
          aria-valuetext={`${formatClock(position)} of ${formatClock(duration)}`}
          onChange={(e) => {
            setStarted(true);
            renderTo(Math.min(duration, Number(e.target.value)));
          }}
        />
        <div className="player-timeline" data-testid="timeline" aria-hidden="true">
          {frames.map((f, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a recording's frames are a fixed list, in order
            <span key={`o${i}`} className="tick" style={{ left: percent(f.at) }} />
          ))}
          {markers.map((m, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a recording's markers are a fixed list, in order
            <span key={`e${i}`} className="marker" style={{ left: percent(m.at) }} title={m.text} />
          ))}
        </div>
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
