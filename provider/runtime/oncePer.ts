/**
 * `make(owner)`, made once per owner object for the life of the process and then shared: the delete coalescer
 * and the shared list of each client. The owner is held weakly, so a dropped client takes its companion along.
 */
export function oncePer<K extends object, V>(make: (owner: K) => V): (owner: K) => V {
  const made = new WeakMap<K, V>();
  return (owner) => {
    let value = made.get(owner);
    if (value === undefined) {
      value = make(owner);
      made.set(owner, value);
    }
    return value;
  };
}
