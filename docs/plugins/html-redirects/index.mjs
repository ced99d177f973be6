// Client-side half of the `.html` redirect rule. The static server in
// scripts/serve-site.mjs answers such paths with a 301 itself; this covers every other
// server (the dev server, or a Gatehouse server that falls back to 404.html).
export default function htmlRedirects() {
  return {
    name: 'gatehouse-html-redirects',
    getClientModules() {
      return [new URL('./client.mjs', import.meta.url).pathname];
    },
  };
}
