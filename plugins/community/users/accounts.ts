import { apiKeyRoutes } from '../apikeys/routes';
import { memberRoutes } from '../members/routes';
import { mfaRoutes } from '../mfa/routes';
import { namespaceRoutes } from '../namespaces/routes';

/**
 * Routes of the accounts features beside the user calls: namespaces, members, API keys and MFA. The security
 * settings calls (`/api/users/security`) live with sessions, which own session recording.
 */
export const accountRoutes = [
  // Before the namespace routes: `/api/namespaces/api-key` would otherwise match `/api/namespaces/:tenant`.
  ...apiKeyRoutes,
  ...namespaceRoutes,
  ...memberRoutes,
  ...mfaRoutes,
];
