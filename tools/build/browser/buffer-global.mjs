// esbuild `inject`: the shared code uses Node's global Buffer; the pages get the `buffer` package's.
export { Buffer } from 'buffer';
