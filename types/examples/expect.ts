// The assertions of the type-level tests (type-tests.ts, shapes-type-tests.ts).

/** Compiles only when A and B are the same type. */
export type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** Compiles only when its type argument is `true`. */
export function expectType<T extends true>(): T | undefined {
  return undefined;
}
