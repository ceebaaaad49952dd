// Tests bound to a platform say so, with the reason, instead of returning early or being left out:
// mocha lists them as pending with the reason in the title, so a Windows run (npm run test:windows)
// shows exactly what it did not check and why.

type Platforms = NodeJS.Platform | readonly NodeJS.Platform[];
type Body = Mocha.Func | Mocha.AsyncFunc;

/** True inside a Windows program run by Wine (the wine loader sets WINELOADER in every process it starts). */
export const underWine = process.platform === 'win32' && Boolean(process.env.WINELOADER);

/** Wine 8's fs.symlink answers success and makes nothing (real Windows makes one, with the privilege). */
export const WINE_NO_SYMLINKS = 'Wine 8 creates no symbolic link (symlink succeeds, nothing is there)';

export interface Bound {
  /** Whether the tests run here. */
  runs: boolean;
  it(title: string, fn: Mocha.AsyncFunc): Mocha.Test;
  it(title: string, fn: Mocha.Func): Mocha.Test;
  describe(title: string, fn: (this: Mocha.Suite) => void): Mocha.Suite | void;
}

function bound(runs: boolean, tag: string): Bound {
  return {
    runs,
    it: (title: string, fn: Body) => (runs ? it(title, fn) : it.skip(`${title} ${tag}`, fn)),
    describe: (title, fn) => (runs ? describe(title, fn) : describe.skip(`${title} ${tag}`, fn)),
  };
}

/** Tests that run only on `platforms`; elsewhere they are pending, titled with `why`. */
export function onlyOn(platforms: Platforms, why: string): Bound {
  const list: readonly NodeJS.Platform[] = typeof platforms === 'string' ? [platforms] : platforms;
  return bound(list.includes(process.platform), `[${list.join('/')} only: ${why}]`);
}

/** Tests whose subject Wine does not implement (taskkill /T, ACLs): pending under Wine, titled with `why`. */
export function notUnderWine(why: string): Bound {
  return bound(!underWine, `[not judged under Wine: ${why}]`);
}
