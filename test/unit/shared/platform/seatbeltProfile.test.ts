// The macOS file-confining Seatbelt profile, read back as S-expressions: which rules, in which order, and that
// no path, however hostile, can end its string literal early. Nothing here runs sandbox-exec (no Mac here).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { planLaunch } from '../../../../src/broker/supervision/launchUpstream';
import {
  pathForms,
  sandboxProfile,
  sbplString,
  seatbeltEnvironment,
  type SeatbeltFiles,
} from '../../../../src/broker/shared/platform/macSandbox';
import { decideSandbox, type SandboxTools } from '../../../../src/broker/trust/sandbox';
import { ServerDefSchema } from '../../../../src/registry/schema';
import { onlyOn } from '../../../helpers/platform';

type Sexp = string | { str: string } | Sexp[];

/** A reader for the subset of SBPL the builder writes: lists, symbols and "strings" with \\ and \" escapes. */
function readSbpl(text: string): Sexp[] {
  let i = 0;
  const forms: Sexp[] = [];
  const stack: Sexp[][] = [forms];
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) i++;
    else if (c === '(') {
      const list: Sexp[] = [];
      stack[stack.length - 1].push(list);
      stack.push(list);
      i++;
    } else if (c === ')') {
      assert.ok(stack.length > 1, `unbalanced ) at ${i}`);
      stack.pop();
      i++;
    } else if (c === '"') {
      let s = '';
      for (i++; text[i] !== '"'; i++) {
        assert.ok(i < text.length, 'unterminated string');
        if (text[i] === '\\') i++;
        s += text[i];
      }
      i++;
      stack[stack.length - 1].push({ str: s });
    } else {
      const m = /^[^\s()"]+/.exec(text.slice(i))!;
      stack[stack.length - 1].push(m[0]);
      i += m[0].length;
    }
  }
  assert.equal(stack.length, 1, 'unbalanced (');
  return forms;
}

/** Each top-level rule as [action, operations, [filter, path][]]. */
function rules(profile: string): { head: string; filters: [string, string][] }[] {
  return readSbpl(profile).map((form) => {
    assert.ok(Array.isArray(form));
    const words = form.filter((x): x is string => typeof x === 'string');
    const filters = form
      .filter((x): x is Sexp[] => Array.isArray(x))
      .map((f): [string, string] => {
        const arg = f[1];
        assert.ok(typeof f[0] === 'string');
        // (local unix-socket) and friends carry no path.
        return [f[0], typeof arg === 'object' && !Array.isArray(arg) ? arg.str : String(arg)];
      });
    return { head: words.join(' '), filters };
  });
}

function files(extra: Partial<SeatbeltFiles> = {}): SeatbeltFiles {
  return {
    home: '/Users/op',
    switchboardHome: '/Users/op/.switchboard',
    hidden: ['/private/tmp'],
    tempDir: '/private/var/folders/ab/cd/T/switchboard-sandbox/k',
    cacheDir: '/private/var/folders/ab/cd/T/switchboard-sandbox/k/.npm',
    root: '/Users/op/project',
    cwd: '/Users/op/project',
    installDirs: ['/opt/homebrew/bin'],
    read: [],
    write: [],
    ...extra,
  };
}

function paths(rs: ReturnType<typeof rules>, head: string): string[] {
  return rs.filter((r) => r.head === head).flatMap((r) => r.filters.map(([, p]) => p));
}

const SEATBELT: SandboxTools = {
  bwrapUnavailable: 'bubblewrap is Linux only',
  networkOnly: null,
  seatbeltUnavailable: null,
};

describe('platform: macOS file sandbox (Seatbelt profile)', () => {
  it('without the filesystem grant: writes only to its own temp and cache, HOME unreadable but the project, no network', () => {
    const rs = rules(sandboxProfile({ network: false, files: files() }));
    assert.deepEqual(
      rs.map((r) => r.head),
      [
        'version 1',
        'allow default',
        'deny network*',
        'allow network*',
        'allow network*',
        'deny file-write*',
        'allow file-write*',
        'deny file-read*',
        'allow file-read*',
        'allow file-read-metadata',
        'deny file-read* file-write*',
        'deny file-write-unlink',
      ],
      'later rules win in SBPL: each allow follows the deny it narrows, and SWITCHBOARD_HOME is denied last',
    );
    const writable = paths(rs, 'allow file-write*');
    assert.ok(writable.includes('/private/var/folders/ab/cd/T/switchboard-sandbox/k'));
    assert.ok(writable.includes('/var/folders/ab/cd/T/switchboard-sandbox/k'), '/var is /private/var: both forms');
    assert.ok(writable.includes('/dev/null') && writable.includes('/dev/fd'));
    assert.ok(!writable.some((p) => p.startsWith('/Users')), 'nothing in HOME is writable without a write grant');
    assert.deepEqual(paths(rs, 'deny file-read*'), ['/Users/op', '/private/tmp', '/tmp']);
    const readable = paths(rs, 'allow file-read*');
    for (const p of ['/Users/op/project', '/opt/homebrew/bin']) assert.ok(readable.includes(p), p);
    assert.deepEqual(paths(rs, 'allow file-read-metadata'), ['/Users/op'], 'realpath() may stat the way to the root');
    assert.deepEqual(paths(rs, 'deny file-read* file-write*'), ['/Users/op/.switchboard']);
    const unlinkable = paths(rs, 'deny file-write-unlink');
    for (const p of ['/Users/op/.switchboard', '/Users/op', '/Users']) assert.ok(unlinkable.includes(p), p);
  });

  it('a filesystem grant with paths: write paths writable and readable, read paths readable only', () => {
    const rs = rules(
      sandboxProfile({
        network: true,
        files: files({ read: ['/Users/op/notes/2026', '/Volumes/data'], write: ['/Users/op/out'] }),
      }),
    );
    assert.ok(!rs.some((r) => r.head.includes('network')), 'the network grant leaves the network alone');
    const writable = paths(rs, 'allow file-write*');
    assert.ok(writable.includes('/Users/op/out'));
    assert.ok(!writable.includes('/Users/op/notes/2026') && !writable.includes('/Volumes/data'));
    const readable = paths(rs, 'allow file-read*');
    for (const p of ['/Users/op/notes/2026', '/Volumes/data', '/Users/op/out']) assert.ok(readable.includes(p), p);
    assert.deepEqual(paths(rs, 'allow file-read-metadata'), ['/Users/op', '/Users/op/notes']);
  });

  it('a grant that re-admits SWITCHBOARD_HOME (the whole HOME, writable) still cannot reach it', () => {
    const rs = rules(sandboxProfile({ network: false, files: files({ write: ['/Users/op'] }) }));
    const grantsHome = rs.map((r, i) =>
      r.head.startsWith('allow') && paths([r], r.head).includes('/Users/op') ? i : -1,
    );
    const hidden = rs.findIndex((r) => r.head === 'deny file-read* file-write*');
    assert.ok(
      Math.max(...grantsHome) >= 0 && hidden > Math.max(...grantsHome),
      'SWITCHBOARD_HOME is denied after HOME is granted',
    );
    assert.deepEqual(rs[hidden].filters, [['subpath', '/Users/op/.switchboard']]);
  });

  it('names /tmp, /var and /etc paths in both forms, and a symlinked path by its real path too', () => {
    assert.deepEqual(pathForms('/tmp/a'), ['/tmp/a', '/private/tmp/a']);
    assert.deepEqual(pathForms('/private/var/x/'), ['/private/var/x', '/var/x']);
    assert.deepEqual(pathForms('/etc'), ['/etc', '/private/etc']);
    assert.deepEqual(pathForms('/Users/op/tmp'), ['/Users/op/tmp']);
    const real = (p: string): string => p.replace('/Users/op/link', '/Volumes/disk/target');
    const rs = rules(
      sandboxProfile({ network: false, files: files({ read: ['/Users/op/link/docs'], realpath: real }) }),
    );
    const readable = paths(rs, 'allow file-read*');
    assert.ok(readable.includes('/Users/op/link/docs') && readable.includes('/Volumes/disk/target/docs'));
  });

  it('quotes hostile paths so that each stays one string, and refuses control characters and relative paths', () => {
    const hostile = [
      '/Users/op/x") (allow default) ("',
      '/Users/op/back\\slash\\',
      '/Users/op/"quoted"',
      '/Users/op/semi;colon #| comment |#',
      '/Users/op/ünï çødé',
    ];
    const profile = sandboxProfile({ network: false, files: files({ write: hostile }) });
    const rs = rules(profile);
    assert.equal(rs.filter((r) => r.head === 'allow default').length, 1, 'no rule smuggled in');
    const writable = paths(rs, 'allow file-write*');
    for (const p of hostile) assert.ok(writable.includes(p), `round-trips: ${p}`);
    assert.equal(sbplString('a"b\\c'), '"a\\"b\\\\c"');
    for (const bad of ['/Users/op/new\nline', '/Users/op/nul\u0000', '/Users/op/del\u007f', '/Users/op/tab\t'])
      assert.throws(() => sandboxProfile({ network: false, files: files({ read: [bad] }) }), /control character/);
    assert.throws(() => sandboxProfile({ network: false, files: files({ read: ['relative/dir'] }) }), /absolute/);
  });

  it('refuses a relative path whatever the working directory, even inside a hidden one (no endless walk)', () => {
    // A relative path resolves against the cwd: from inside the hidden /tmp it once walked up forever.
    const cwd = process.cwd();
    const inside = fs.mkdtempSync(path.join(os.tmpdir(), 'seatbelt-cwd-'));
    try {
      process.chdir(inside);
      for (const read of [['relative/dir'], ['.']])
        assert.throws(() => sandboxProfile({ network: false, files: files({ hidden: ['/tmp'], read }) }), /absolute/);
    } finally {
      process.chdir(cwd);
      fs.rmSync(inside, { recursive: true, force: true });
    }
  });

  it('keeps the network-only profile as it was when the files are not confined', () => {
    assert.equal(
      sandboxProfile({ network: false }),
      '(version 1)\n(allow default)\n(deny network*)\n(allow network* (local unix-socket))\n(allow network* (remote unix-socket))',
    );
    assert.equal(sandboxProfile({ network: true }), '(version 1)\n(allow default)');
  });

  it('points the temp variables and npm cache at the server’s own directories', () => {
    assert.deepEqual(seatbeltEnvironment({ tempDir: '/t', cacheDir: '/t/.npm' }), {
      TMPDIR: '/t',
      TMP: '/t',
      TEMP: '/t',
      npm_config_cache: '/t/.npm',
      NPM_CONFIG_CACHE: '/t/.npm',
    });
  });
});

describe('platform: macOS enforcement state', () => {
  const stdio = (extra: Record<string, unknown> = {}) => ({ transport: 'stdio', grants: [] as string[], ...extra });

  it('with sandbox-exec working: files and network enforced, the granted paths listed', () => {
    const none = decideSandbox(stdio(), SEATBELT);
    assert.equal(none.seatbelt, true);
    assert.equal(none.bwrap, false);
    assert.equal(none.network, 'none');
    assert.equal(none.enforcement.filesystem, 'enforced');
    assert.equal(none.enforcement.network, 'enforced');
    const scoped = decideSandbox(
      stdio({ grants: ['filesystem', 'network'], filesystem: { read: ['~/a'], write: ['out'] } }),
      SEATBELT,
    );
    assert.equal(scoped.seatbelt, true);
    assert.equal(scoped.network, 'full');
    assert.equal(scoped.enforcement.network, 'granted');
    assert.deepEqual([scoped.enforcement.readPaths, scoped.enforcement.writePaths], [['~/a'], ['out']]);
  });

  it('a network allow-list fails closed on macOS, and says so', () => {
    const d = decideSandbox(stdio({ grants: ['network'], network: { allow: ['api.github.com'] } }), SEATBELT);
    assert.equal(d.network, 'none');
    assert.equal(d.enforcement.network, 'enforced');
    assert.equal(d.enforcement.allowedHosts, undefined);
    assert.match(d.enforcement.notes.join(' '), /allow-list is not built on macOS.*no network at all/);
  });

  it('a bare filesystem grant keeps full file access; without sandbox-exec nothing is claimed and the reason is given', () => {
    const bare = decideSandbox(stdio({ grants: ['filesystem'] }), {
      ...SEATBELT,
      networkOnly: ['/usr/bin/sandbox-exec'],
    });
    assert.equal(bare.seatbelt, undefined);
    assert.equal(bare.enforcement.filesystem, 'granted');
    assert.deepEqual(bare.networkOnlyPrefix, ['/usr/bin/sandbox-exec']);
    const refused = decideSandbox(stdio(), { ...SEATBELT, seatbeltUnavailable: 'sandbox-exec refused the profile: x' });
    assert.equal(refused.seatbelt, undefined);
    assert.equal(refused.enforcement.filesystem, 'not-enforced');
    assert.match(
      refused.enforcement.notes.join(' '),
      /file access is not restricted: sandbox-exec refused the profile/,
    );
  });

  // The plan of a macOS launch makes its temp dir and resolves its paths on the host it runs on.
  onlyOn(['linux', 'darwin'], 'builds a macOS plan from POSIX paths on this host').it(
    'the launch plan wraps the server in sandbox-exec with its own temp dir when the profile is used',
    () => {
      const def = ServerDefSchema.parse({ name: 'mac-x', command: 'node', args: ['s.js'], grants: [] });
      const env = { PATH: '/usr/bin', HOME: '/home/op', SWITCHBOARD_HOME: '/home/op/.sb' };
      const plan = planLaunch(def, '/home/op/ws', { parentEnv: env, sandbox: SEATBELT });
      assert.equal(plan.enforcement.filesystem, 'enforced');
      assert.ok(plan.launch.transport === 'stdio');
      const [exec, flag, profile] = plan.launch.wrapper!;
      assert.deepEqual([exec, flag], ['/usr/bin/sandbox-exec', '-p']);
      const rs = rules(profile);
      const tmp = plan.launch.env.TMPDIR;
      try {
        assert.ok(fs.statSync(tmp).isDirectory());
        assert.equal(plan.launch.env.npm_config_cache, `${tmp}/.npm`);
        assert.ok(paths(rs, 'allow file-write*').includes(tmp));
        assert.ok(paths(rs, 'allow file-read*').includes('/home/op/ws'));
        assert.deepEqual(paths(rs, 'deny file-read* file-write*'), ['/home/op/.sb']);
        assert.ok(rs.some((r) => r.head === 'deny network*'));
      } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
      }
    },
  );
});
