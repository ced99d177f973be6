import type { RegisterContext } from '@gatehouse/core';
import { asClass } from 'awilix';
import { announcementRoutes } from './routes';
import { AnnouncementService } from './service';

declare module '@gatehouse/core/cradle' {
  interface Cradle {
    announcements: AnnouncementService;
  }
}

/** Announcements: public reading, instance administrators publish. */
export function registerAnnouncements(ctx: RegisterContext): void {
  ctx.provide({ announcements: asClass(AnnouncementService).singleton() });
  ctx.routes(announcementRoutes);
}
