import { cleanDocsPath } from './clean-path.mjs';

function redirectIfHtml(location) {
  const clean = cleanDocsPath(location.pathname);
  if (clean !== location.pathname) {
    window.location.replace(clean + location.search + location.hash);
  }
}

if (typeof window !== 'undefined') {
  redirectIfHtml(window.location);
}

export function onRouteUpdate({ location }) {
  redirectIfHtml(location);
}
