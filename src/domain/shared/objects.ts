/**
 * `{ ...base, ...fields }` for objects made on every request: the same keys in the same order.
 *
 * Why not the spread: on Node 20 (V8 11), an object made by a leading spread that then gets a
 * key its source did not have (`{ ...request, model }`) ends up in the old generation on every
 * call, together with everything it references; only a full GC frees it. Measured in a bare
 * loop: ~85 bytes promoted per object, plus what it points to (for the canonical request: the
 * request's messages). Object.assign onto a fresh object does not do that.
 */
export function withFields<Base extends object, Fields extends object>(base: Base, fields: Fields): Omit<Base, keyof Fields> & Fields {
  return Object.assign({}, base, fields);
}
