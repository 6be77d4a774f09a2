// The environment defaults shared by the package's browser entries loaded in one page: web.js
// (the first and second modules) and count.js (the counting module). Each entry's
// setEnvironmentDefaults applies them to its own modules (which check them), then shares them
// here with the other entries joined; an entry joins once its module is initialised, and then
// gets the latest defaults any entry was given. So the page's meter (count.js) and its
// compaction (web.js) always read the same defaults, whichever entry was told.

/** @type {Set<(env: unknown) => void>} each joined entry's own setter */
const locals = new Set();
/** @type {{ env: unknown } | undefined} */
let latest;

/**
 * Joins an entry whose module is initialised: it gets the latest defaults given to any entry.
 * @param {(env: unknown) => void} local the entry's own setter (its modules only)
 */
export function joinDefaults(local) {
  if (locals.has(local)) return;
  locals.add(local);
  if (latest !== undefined) local(latest.env);
}

/**
 * Shares defaults an entry's own setter accepted with the other entries joined.
 * @param {(env: unknown) => void} local the entry's own setter, already called
 * @param {unknown} env
 */
export function shareDefaults(local, env) {
  latest = { env };
  for (const other of locals) if (other !== local) other(env);
}
