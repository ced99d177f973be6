import type { RegisterContext } from '@gatehouse/core';
import { samlStandIns } from './routes';

/** The SAML calls outside enterprise: 501 stand-ins that the enterprise plugin's routes replace. */
export function register(ctx: RegisterContext): void {
  ctx.routes(samlStandIns);
}
