/** Helpers of building the catalog from its source. */

/** A catalog field's path, as `formatPath` writes it (`models[0].deployments[1].vendor`). */
export type Path = readonly (string | number)[];

/** A refusal of one field of the catalog source, named by its path. */
export class FieldError extends Error {
  constructor(
    readonly path: Path,
    message: string,
  ) {
    super(message);
  }
}

/** The catalog is read-only once built. */
export function freeze<T extends object>(value: T): Readonly<T> {
  return Object.freeze(value);
}
