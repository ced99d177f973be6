// Prism's core file is the same object @types/prismjs describes as `prismjs`, without
// the bundled grammars the package entry point adds.
declare module 'prismjs/components/prism-core' {
  import * as Prism from 'prismjs';
  export default Prism;
}
