// The metrics SDK finds a record's data point by a string made from its attributes on every record
// (keys sorted, pairs stringified): the largest single item of telemetry's cost per call in the CPU
// profile of stop 40. The broker records with frozen attribute sets made once per kind of request
// (attributeSets.ts), so each set's string is made once and kept beside it (a WeakMap): a lookup
// instead of a sort and a JSON.stringify. A set that is not frozen could change between two records,
// so it is hashed afresh, as the SDK does. The SDK has no option for this: its `hashAttributes` is
// replaced before the first MeterProvider is made (its maps read it when they are built), and left
// alone if the module is not shaped as expected (another SDK version): only the saving is lost.
import type { Attributes } from '@opentelemetry/api';

type Hash = (attributes: Attributes) => string;

let installed = false;

/** A hash that keeps the string of each frozen attribute set it has seen. */
export function memoizedHash(hash: Hash): Hash {
  const known = new WeakMap<Attributes, string>();
  // A call records two sets in turn (its SERVER and its CLIENT duration): the last two are checked
  // by identity before the WeakMap, whose lookup was ~1 µs a record in the CPU profile (stop 44).
  let lastSet: Attributes | undefined;
  let lastId = '';
  let otherSet: Attributes | undefined;
  let otherId = '';
  return (attributes) => {
    if (attributes === lastSet) return lastId;
    if (attributes === otherSet) return otherId;
    if (!Object.isFrozen(attributes)) return hash(attributes);
    let id = known.get(attributes);
    if (id === undefined) known.set(attributes, (id = hash(attributes)));
    otherSet = lastSet;
    otherId = lastId;
    lastSet = attributes;
    lastId = id;
    return id;
  };
}

/** Puts the memoized hash into the metrics SDK (once); false when the SDK is not as expected. */
export function installAttributeHash(): boolean {
  if (installed) return true;
  let utils: { hashAttributes?: unknown };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    utils = require('@opentelemetry/sdk-metrics/build/src/utils') as { hashAttributes?: unknown };
  } catch {
    return false;
  }
  if (typeof utils.hashAttributes !== 'function' || utils.hashAttributes.length !== 1) return false;
  utils.hashAttributes = memoizedHash(utils.hashAttributes as Hash);
  installed = true;
  return true;
}
