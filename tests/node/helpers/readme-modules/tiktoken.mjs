// Stand-in for `tiktoken` (a native tokenizer, not a dev dependency) in the README samples:
// `get_encoding(name).encode(text)` from js-tiktoken's pure-JavaScript port of the same encodings.
import { getEncoding } from 'js-tiktoken';

export function get_encoding(name) {
  const enc = getEncoding(name);
  return { encode: (text) => enc.encode(text), free() {} };
}
