// Entry point of the esbuild bundle bin/msgpack.js (see `make loadtest-install`):
// the UTF-8 polyfill first, then the msgpack codec, as ES2017 for k6.
import './text-polyfill.js';

export { Decoder, Encoder, decode, encode } from '@msgpack/msgpack';
