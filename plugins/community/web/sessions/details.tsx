import {
  Alert,
  ApiError,
  Button,
  Card,
  Empty,
  ErrorState,
  formatDate,
  Link,
  Loading,
  PageHeader,
  ScrollFrame,
  useApi,
  useCan,
  useResource,
} from '@gatehouse/console';
import { useState } from 'react';
import { calls } from '../api';
import type { Device, RecordedEntry, Session, SessionEvent } from '../types';
import { CloseSessionDialog } from './close';
import {
  describeEvent,
  exitsOf,
  exitText,
  formatClock,
  formatDuration,
  recordingState,
  signInOf,
  timing,
} from './describe';
import { SessionState } from './list';
import { Playback } from './playback';
import { ShareLinks } from './shares';
import { LiveTerminal } from './watch';

function Recording({ uid, seats, events }: { uid: string; seats: number[]; events: SessionEvent[] }) {
  const api = useApi();
  const [seat, setSeat] = useState(seats[0] ?? 0);
  const records = useResource(
    () =>
      api.call<RecordedEntry[] | null>(calls.getRecording, {
        params: { uid, seat },
        context: 'Could not load the recording',
      }),
    [api, uid, seat],
  );
  return (
    <Card
      title="Recording"
      actions={
        seats.length > 1 ? (
          <label className="row" style={{ gap: 6 }}>
            <span className="muted">Channel</span>
            <select
              className="input"
              style={{ width: 90 }}
              value={seat}
              onChange={(e) => setSeat(Number(e.target.value))}
            >
              {seats.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
        ) : null
      }
    >
      <div className="card-body">
        {records.error ? (
          <ErrorState message={records.error} onRetry={records.reload} />
        ) : !records.data && records.loading ? (
          <Loading label="Loading the recording…" />
        ) : (records.data ?? []).length === 0 ? (
          <Empty title="Nothing was recorded">The session produced no terminal output on this channel.</Empty>
        ) : (
          <Playback
            key={seat}
            entries={records.data ?? []}
            events={events.filter((e) => (e.seat ?? 0) === seat)}
          />
        )}
      </div>
    </Card>
  );
}

/** An amount of lost output in words: bytes, KiB or MiB. */
function lostText(bytes: number): string {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

export function SessionDetailsPage({ params }: { params: Record<string, string> }) {
  const api = useApi();
  const mayClose = useCan()(calls.closeSession).allowed;
  const [closing, setClosing] = useState(false);
  /** Whether the session ended while this page watched it: the live card stays, with its last screen. */
  const [endedLive, setEndedLive] = useState(false);
  const uid = params.uid ?? '';
  const session = useResource(
    () =>
      api
        .call<Session>(calls.getSession, { params: { uid }, context: 'Could not load the session' })
        .catch((error: unknown) => {
          // Gone, never in this namespace, or not a uid at all: asking again changes nothing, so it is said
          // without a retry.
          if (
            error instanceof ApiError &&
            (error.status === 404 || (error.status === 400 && error.fields.includes('uid')))
          )
            return null;
          throw error;
        }),
    [api, uid],
  );
  const deviceUid = session.data?.device_uid;
  const looked = useResource(async () => {
    // The device is looked up by uid, devices first, so its kind (an agent's device, or a container a
    // connector exposes) is known for the link, and its name even when the answer leaves it out.
    if (!deviceUid) return null;
    for (const [call, path] of [
      [calls.getDevice, '/device/'],
      [calls.getContainer, '/container/'],
    ] as const) {
      try {
        return { device: await api.call<Device>(call, { params: { uid: deviceUid } }), path };
      } catch {
        // Not of this kind, or removed since.
      }
    }
    return null;
  }, [api, deviceUid]);
  if (session.error) return <ErrorState message={session.error} onRetry={session.reload} />;
  if (session.data === null)
    return (
      <>
        <PageHeader title="Session not found" />
        <Empty
          title="There is no session at this address in this namespace"
          action={
            <Link to="/sessions" className="btn btn-primary">
              All sessions
            </Link>
          }
        >
          It was removed, or it belongs to another namespace: switch namespace from the menu at the top.
        </Empty>
      </>
    );
  if (!session.data) return <Loading />;
  const s = session.data;
  const device = s.device ?? looked.data?.device ?? undefined;
  const devicePath = `${looked.data?.path ?? '/device/'}${s.device_uid}`;
  const events = s.events?.items ?? [];
  const seats = s.events?.seats && s.events.seats.length > 0 ? s.events.seats : [0];
  const recording = recordingState(s);
  const { ended, durationMs } = timing(s);
  const exits = exitsOf(s);
  const signIn = signInOf(s);
  const started = Date.parse(s.started_at);
  return (
    <>
      <PageHeader
        title={`Session on ${device?.name ?? s.device_uid.slice(0, 12)}`}
        description={<Link to="/sessions">← All sessions</Link>}
        actions={
          s.active && mayClose ? (
            <Button variant="danger" onClick={() => setClosing(true)}>
              Close session
            </Button>
          ) : null
        }
      />
      <CloseSessionDialog
        session={closing ? s : null}
        onClose={() => setClosing(false)}
        onClosed={session.reload}
      />
      <div className="stack">
        {recording.recorded && (s.active || endedLive) ? (
          <LiveTerminal
            params={{ uid: s.uid }}
            seat={seats[0] ?? 0}
            onEnded={() => {
              setEndedLive(true);
              session.reload();
            }}
          />
        ) : null}
        {recording.recorded && s.recording_lost_bytes > 0 ? (
          <Alert kind="warn" title="Part of this recording was not stored">
            {lostText(s.recording_lost_bytes)} of this session's output could not be written to the database,
            from {formatDate(s.recording_lost_at)}: the server kept it for a while and tried again, then gave
            up. What was stored plays below, with that part missing.
          </Alert>
        ) : null}
        {recording.recorded && s.active ? <ShareLinks uid={s.uid} /> : null}
        {recording.recorded ? (
          // Read again when the session ends: what it recorded while this page was open is then complete.
          <Recording key={s.active ? 'active' : 'ended'} uid={s.uid} seats={seats} events={events} />
        ) : (
          <Alert kind="info" title={recording.why === 'removed' ? 'Recording removed' : 'Not recorded'}>
            {recording.text}
          </Alert>
        )}
        <Card title="Details">
          <div className="card-body">
            <dl className="props">
              <dt>State</dt>
              <dd>
                <SessionState session={s} />
              </dd>
              <dt>Device</dt>
              <dd>
                <Link to={devicePath}>{device?.name ?? s.device_uid}</Link>
              </dd>
              <dt>User</dt>
              <dd>{s.username}</dd>
              <dt>From</dt>
              <dd className="mono">{s.ip_address}</dd>
              <dt>Type</dt>
              <dd>
                {s.type === 'web' ? 'Web terminal' : 'SSH'}
                {s.term ? ` · ${s.term}` : ''}
              </dd>
              <dt>Signed in with</dt>
              <dd>{signIn ?? (s.authenticated ? '—' : 'Not signed in')}</dd>
              <dt>Started</dt>
              <dd>{formatDate(s.started_at)}</dd>
              <dt>Ended</dt>
              <dd>{ended ? formatDate(ended) : 'Still active'}</dd>
              <dt>Duration</dt>
              <dd>
                {formatDuration(durationMs)}
                {ended ? '' : ' so far'}
              </dd>
              <dt>Exit status</dt>
              <dd>
                {exits.length === 0
                  ? '—'
                  : exits
                      .map((x) => `${exitText(x.exit)}${seats.length > 1 ? ` (channel ${x.seat})` : ''}`)
                      .join(', ')}
              </dd>
            </dl>
          </div>
        </Card>
        <Card title="Events">
          {events.length === 0 ? (
            <Empty title="No events">Events such as the shell opening or a window change appear here.</Empty>
          ) : (
            <ScrollFrame label="Session events">
              <table className="table" aria-label="Session events">
                <thead>
                  <tr>
                    <th>Time</th>
                    <th>What happened</th>
                    <th>Channel</th>
                  </tr>
                </thead>
                <tbody>
                  {events.map((e, i) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: a session's events are a fixed list, in order
                    <tr key={i}>
                      <td className="mono" title={formatDate(e.timestamp)}>
                        +{formatClock(Date.parse(e.timestamp) - started)}
                      </td>
                      <td style={{ overflowWrap: 'anywhere' }}>{describeEvent(e)}</td>
                      <td>{e.seat ?? 0}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollFrame>
          )}
        </Card>
      </div>
    </>
  );
}
