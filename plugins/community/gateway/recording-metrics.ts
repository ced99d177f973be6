import { Counter, Gauge, type Registry } from 'prom-client';
import { recordingLosses, unwrittenRecordings } from './journal';

/**
 * What recording lost or holds, on the server's metrics (`GET /metrics`): a store that fails is seen there before a
 * session's page says its recording is incomplete.
 */
export function registerRecordingMetrics(registry: Registry): void {
  new Counter({
    name: 'gatehouse_recording_write_failures_total',
    help: 'Writes of session journals (rows, events, recorded output) that the store refused or failed.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(recordingLosses.failedWrites);
    },
  });
  new Counter({
    name: 'gatehouse_recording_lost_bytes_total',
    help: 'Bytes of recorded terminal output given up on after the store did not take them (counted on the session).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(recordingLosses.lostBytes);
    },
  });
  new Gauge({
    name: 'gatehouse_recording_retrying_bytes',
    help: 'Bytes of recorded terminal output the store failed to take, kept to be written again.',
    registers: [registry],
    collect() {
      this.set(recordingLosses.retrying());
    },
  });
  new Gauge({
    name: 'gatehouse_recording_unwritten_bytes',
    help: 'Bytes of recorded terminal output taken and not yet written to the store.',
    registers: [registry],
    collect() {
      this.set(unwrittenRecordings());
    },
  });
}
