// Docusaurus prefetches the chunks of every link as soon as it scrolls into view; matching each link against every
// route blocked a throttled phone's main thread for 150 ms or more on each page. Links still load their page's
// chunks when pointed at or touched (the theme's preload), which is in time for the click.
export function onRouteDidUpdate(): void {
  const runtime = (window as unknown as { docusaurus?: { prefetch: (path: string) => unknown } }).docusaurus;
  if (runtime) runtime.prefetch = () => false;
}
