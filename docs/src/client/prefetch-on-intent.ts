// Docusaurus prefetches the chunks of every link as soon as it scrolls into view; matching each link against every
// route blocked a throttled phone's main thread for 150 ms or more on each page. Links still load their page's
// chunks when pointed at or touched (the theme's preload), which is in time for the click.
interface Runtime {
  prefetch: (path: string) => unknown;
  preload: (path: string) => unknown;
}

// Runs after the first render's commit, before the links' visibility is first reported. The runtime object is
// read-only, so it is replaced by one whose prefetch does nothing.
export function onRouteDidUpdate(): void {
  const holder = window as unknown as { docusaurus?: Runtime };
  const runtime = holder.docusaurus;
  if (runtime && runtime.prefetch !== noPrefetch) holder.docusaurus = { ...runtime, prefetch: noPrefetch };
}

const noPrefetch = () => false;
