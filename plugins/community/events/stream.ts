import { PassThrough } from 'node:stream';
import type { Context } from 'koa';

/**
 * Answers `ctx` with a Server-Sent Events stream and returns it: it stays open (no socket timeout), goes out as
 * written (no compression, no proxy buffering), is never cached, and is destroyed when the client goes.
 */
export function eventStream(ctx: Context): PassThrough {
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.compress = false;
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.type = 'text/event-stream; charset=utf-8';
  const out = new PassThrough();
  ctx.res.once('close', () => out.destroy());
  ctx.body = out;
  return out;
}
