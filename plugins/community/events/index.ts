import type { RegisterContext } from '@gatehouse/core';
import { asClass } from 'awilix';
import { eventRoutes } from './routes';
import { ConsoleEvents } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    /** The consoles' event streams: `publish(tenantId, event)` where a fact changes, on any instance. */
    consoleEvents: ConsoleEvents;
  }
}

/** `GET /api/events`, and the streams it holds (docs/content/developers/event-stream.md). */
export function register(ctx: RegisterContext): void {
  ctx.provide({ consoleEvents: asClass(ConsoleEvents).singleton() });
  ctx.routes(eventRoutes);
  // Declines every upgrade: it is here for its stop, which ends the held streams before HTTP closes (HTTP waits
  // for the requests it carries, and a stream never ends by itself).
  ctx.upgrade(
    () => false,
    () => ctx.resolve('consoleEvents').stop(),
  );
}
