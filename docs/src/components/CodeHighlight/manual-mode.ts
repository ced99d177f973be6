// Imported before Prism's core: Prism reads `window.Prism.manual` while it loads and would
// otherwise re-highlight every code block on DOMContentLoaded, changing the DOM that React
// is about to hydrate.
if (typeof window !== 'undefined') {
  (window as { Prism?: object }).Prism = { manual: true, disableWorkerMessageHandler: true };
}

export {};
