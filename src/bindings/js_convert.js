// Helpers of the conversions of src/bindings/convert.rs that are shorter in JS than
// through Reflect. No decisions are made here.

// Entries of a Map, a plain object, or an array of {path, …} records, as [key, value] pairs.
export function entriesOf(v) {
  if (v === null || v === undefined) return [];
  if (v instanceof Map) return Array.from(v.entries());
  if (Array.isArray(v)) return v.map((x) => [x && typeof x === 'object' ? (x.path ?? x.name) : x, x]);
  if (typeof v === 'object') return Object.entries(v);
  return null;
}
