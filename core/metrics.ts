import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** Prometheus metrics of one kernel (its own registry, so two kernels can live in one process). */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'gatehouse_http_requests_total',
    help: 'HTTP requests by method, route and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'gatehouse_http_request_duration_seconds',
    help: 'HTTP request duration by method and route.',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  readonly processErrors = new Counter({
    name: 'gatehouse_process_errors_total',
    help: 'Errors nothing caught (unhandled rejections, uncaught exceptions): bugs, logged; the server went on.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly sshRefused = new Counter({
    name: 'gatehouse_ssh_refused_total',
    help: 'SSH connections refused at accept: pre-auth caps (startups, per-source) and penalised sources.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'gatehouse_' });
  }
}
