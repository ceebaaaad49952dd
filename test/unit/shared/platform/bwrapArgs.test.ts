// The bubblewrap command line, the state it implies, the allow-list matcher and the schema keys: pure.
import assert from 'node:assert/strict';
import { canonicalHost, isAllowed, parseAllowEntry } from '../../../../src/broker/trust/networkAllow';
import {
  bwrapPlan,
  installDirsOf,
  isolationArgs,
  leadsOutOfRoot,
  RUNTIME_DIRS,
  isInside,
  resolveGrantPath,
  runnerPackageDir,
  scriptPackageDir,
  type BwrapInput,
} from '../../../../src/broker/shared/platform/bwrapArgs';
import { decideSandbox, networkOnlyCandidates, type SandboxTools } from '../../../../src/broker/trust/sandbox';
import { nodeRunnerPackageOf } from '../../../../src/registry/packageRunner';
import { ServerDefSchema } from '../../../../src/registry/schema';
import { normalizeForApproval } from '../../../../src/broker/trust/approvalMaterial';
import type { ServerStatus } from '../../../../src/broker/control/controlApi';
import { enforcementLines } from '../../../../src/extension/presentation';

const ISOLATION = ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--cap-drop', 'ALL', '--die-with-parent'];
const BWRAP: SandboxTools = { bwrapUnavailable: null, networkOnly: ['unshare', '--net', '--'] };
const NO_BWRAP: SandboxTools = {
  bwrapUnavailable: 'bubblewrap (bwrap) is not installed',
  networkOnly: ['unshare', '--net', '--'],
};

function input(extra: Partial<BwrapInput> = {}): BwrapInput {
  return {
    files: 'confined',
    userNamespace: true,
    home: '/home/op',
    switchboardHome: '/home/op/.switchboard',
    root: '/home/op/project',
    cwd: '/home/op/project',
    installDirs: [],
    read: [],
    write: [],
    network: { kind: 'none' },
    exists: () => true,
    ...extra,
  };
}

/** The `--x a b` mounts after the fixed prologue, as [flag, path] pairs. */
function mounts(args: string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < args.length; i++) {
    if (['--tmpfs', '--proc'].includes(args[i])) out.push([args[i], args[++i]]);
    else if (['--ro-bind-try', '--bind-try', '--bind'].includes(args[i])) out.push([args[i], args[(i += 2)]]);
  }
  return out;
}

describe('platform: bubblewrap sandbox', () => {
  it("binds back a script's package (nearest package.json or pyproject.toml), never a hidden directory whole", () => {
    const files = new Set(['/home/ann/src/app/package.json', '/home/ann/package.json', '/tmp/x/pyproject.toml']);
    const isFile = (p: string): boolean => files.has(p);
    const hidden = ['/home/ann', '/tmp'];
    assert.equal(scriptPackageDir('/home/ann/src/app/test/fixtures/echo.mjs', hidden, isFile), '/home/ann/src/app');
    assert.equal(scriptPackageDir('/tmp/x/tool.py', hidden, isFile), '/tmp/x');
    // A stray ~/package.json does not expose HOME: the script's own folder instead.
    assert.equal(scriptPackageDir('/home/ann/tools/server.js', hidden, isFile), '/home/ann/tools');
    assert.equal(scriptPackageDir('/home/ann/server.js', hidden, isFile), '/home/ann/server.js', 'the file alone');
    assert.equal(
      scriptPackageDir('/opt/s/server.js', hidden, () => false),
      '/opt/s',
    );
    assert.equal(
      scriptPackageDir('/tmp/r/node_modules/@scope/pkg/dist/index.js', hidden, isFile),
      '/tmp/r/node_modules',
      'a package in node_modules needs its hoisted dependencies',
    );
  });

  it('finds the node_modules a Node package runner runs from, looking up from the working directory', () => {
    const files = new Set([
      '/tmp/clone/node_modules/.bin/mcp-server-everything',
      '/tmp/clone/node_modules/@modelcontextprotocol/server-everything/package.json',
    ]);
    const exists = (p: string): boolean => files.has(p);
    assert.equal(runnerPackageDir('mcp-server-everything', '/tmp/clone/workspace', exists), '/tmp/clone/node_modules');
    assert.equal(
      runnerPackageDir('@modelcontextprotocol/server-everything@2026.1.0', '/tmp/clone/workspace/sub', exists),
      '/tmp/clone/node_modules',
    );
    assert.equal(runnerPackageDir('not-installed', '/tmp/clone/workspace', exists), undefined);
    assert.equal(
      nodeRunnerPackageOf('npx', ['--no-install', 'mcp-server-everything', 'stdio']),
      'mcp-server-everything',
    );
    assert.equal(nodeRunnerPackageOf('npm', ['exec', '-p', 'x', 'y-bin']), 'y-bin');
    assert.equal(nodeRunnerPackageOf('uvx', ['weather']), undefined, 'not a Node runner');
    assert.equal(nodeRunnerPackageOf('node', ['server.js']), undefined);
  });

  it('without the filesystem grant: root read-only, /tmp and HOME empty, the registry root bound back, no network', () => {
    const { prefix, env } = bwrapPlan(input());
    assert.deepEqual(prefix.slice(0, 12), ['bwrap', ...ISOLATION, '--ro-bind', '/', '/', '--dev', '/dev']);
    assert.deepEqual(mounts(prefix), [
      ['--tmpfs', '/tmp'],
      ['--tmpfs', '/home/op'],
      ['--ro-bind-try', '/home/op/project'],
      ['--proc', '/proc'],
      ['--tmpfs', '/home/op/.switchboard'],
    ]);
    assert.ok(prefix.includes('--unshare-net'));
    assert.deepEqual(prefix.slice(-3), ['--chdir', '/home/op/project', '--']);
    assert.equal(env.TMPDIR, '/tmp');
    assert.equal(env.npm_config_cache, '/tmp/.npm');
  });

  it('hides SWITCHBOARD_HOME last, even inside a granted path, and XDG_RUNTIME_DIR where it exists', () => {
    const plan = bwrapPlan(
      input({ write: ['/home/op'], hidden: ['/run/user/1000', '/nope'], exists: (p) => p !== '/nope' }),
    );
    const m = mounts(plan.prefix);
    assert.deepEqual(m[m.length - 1], ['--tmpfs', '/home/op/.switchboard']);
    assert.ok(m.some(([f, p]) => f === '--tmpfs' && p === '/run/user/1000'));
    assert.ok(!m.some(([, p]) => p === '/nope'));
    assert.ok(m.some(([f, p]) => f === '--bind-try' && p === '/home/op'));
  });

  it('binds granted paths most general first, so a read-only path inside a writable one stays read-only', () => {
    const plan = bwrapPlan(input({ read: ['/data/shared/ro'], write: ['/data/shared'] }));
    const binds = mounts(plan.prefix).filter(([f]) => f !== '--tmpfs' && f !== '--proc');
    assert.deepEqual(binds, [
      ['--bind-try', '/data/shared'],
      ['--ro-bind-try', '/data/shared/ro'],
      ['--ro-bind-try', '/home/op/project'],
    ]);
  });

  it("binds the command's install dir back only when it is hidden, and a node_modules tree whole", () => {
    const dirs = installDirsOf([
      '/home/op/.nvm/versions/node/v22/bin/npx',
      '/home/op/.nvm/versions/node/v22/lib/node_modules/npm/bin/npx-cli.js',
      '/home/op/.cargo/bin/tool',
      '/usr/bin/node',
    ]);
    assert.deepEqual(dirs, [
      '/home/op/.nvm/versions/node/v22/bin',
      '/home/op/.nvm/versions/node/v22/lib/node_modules',
      '/home/op/.cargo/bin',
      '/usr/bin',
    ]);
    const binds = mounts(bwrapPlan(input({ installDirs: dirs })).prefix).map(([, p]) => p);
    assert.ok(binds.includes('/home/op/.cargo/bin') && !binds.includes('/home/op/.cargo'));
    assert.ok(!binds.includes('/usr/bin'), '/usr/bin is visible already');
  });

  it('keeps the host file system for a grant without paths, and the host network with the grant', () => {
    const plan = bwrapPlan(input({ files: 'full', network: { kind: 'full' } }));
    assert.deepEqual(plan.prefix.slice(0, 12), ['bwrap', ...ISOLATION, '--dev-bind', '/', '/', '--proc', '/proc']);
    assert.ok(!plan.prefix.includes('--unshare-net'));
    assert.deepEqual(plan.env, {});
  });

  it('isolates every sandbox whatever it is granted: user and PID namespaces, no capabilities, its own /proc', () => {
    for (const extra of [
      {},
      { files: 'full' as const },
      { files: 'full' as const, network: { kind: 'full' as const } },
    ]) {
      const { prefix } = bwrapPlan(input(extra));
      for (const flag of ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--die-with-parent'])
        assert.ok(prefix.includes(flag), `${flag} in ${prefix.join(' ')}`);
      assert.equal(prefix[prefix.indexOf('--cap-drop') + 1], 'ALL');
      assert.equal(prefix[prefix.indexOf('--proc') + 1], '/proc');
    }
    // Root where no user namespace can be made: still no capabilities.
    const rootOnly = bwrapPlan(input({ userNamespace: false })).prefix;
    assert.ok(!rootOnly.includes('--unshare-user') && rootOnly.includes('--cap-drop'));
    assert.deepEqual(isolationArgs(false), [
      '--unshare-pid',
      '--unshare-ipc',
      '--cap-drop',
      'ALL',
      '--die-with-parent',
    ]);
  });

  it('hides /run (daemon sockets) and binds back the resolver configuration it holds', () => {
    const resolv = '/run/systemd/resolve/stub-resolv.conf';
    const m = mounts(bwrapPlan(input({ hidden: [...RUNTIME_DIRS], systemFiles: [resolv, '/etc/hosts'] })).prefix);
    assert.ok(
      m.some(([f, p]) => f === '--tmpfs' && p === '/run'),
      JSON.stringify(m),
    );
    assert.ok(m.some(([f, p]) => f === '--ro-bind-try' && p === resolv));
    assert.ok(!m.some(([, p]) => p === '/etc/hosts'), 'a file outside hidden directories is visible already');
    // A grant naming a socket brings that socket back, after /run is emptied.
    const granted = mounts(bwrapPlan(input({ hidden: ['/run'], write: ['/run/docker.sock'] })).prefix);
    const run = granted.findIndex(([f, p]) => f === '--tmpfs' && p === '/run');
    assert.ok(granted.findIndex(([, p]) => p === '/run/docker.sock') > run);
  });

  it('tells a path of the workspace that is really a link into a hidden place (HOME) from its own files', () => {
    const root = { path: '/work/repo', real: '/work/repo' };
    const hidden = ['/home/op', '/tmp'];
    assert.ok(leadsOutOfRoot('/work/repo/tool.mjs', '/home/op/.ssh/x.mjs', root, hidden), 'a link into HOME');
    assert.ok(!leadsOutOfRoot('/work/repo/tool.mjs', '/work/repo/lib/tool.mjs', root, hidden), 'within the root');
    assert.ok(!leadsOutOfRoot('/work/repo/t', '/opt/tools/t', root, hidden), 'visible anyway: nothing to hide');
    assert.ok(!leadsOutOfRoot('/home/op/tools/s.js', '/home/op/x/s.js', root, hidden), 'named by the operator');
    // A root that is itself reached through a link (/home -> /var/home) is compared by its real path.
    const linked = { path: '/home/op/repo', real: '/var/home/op/repo' };
    assert.ok(!leadsOutOfRoot('/home/op/repo/a.js', '/var/home/op/repo/a.js', linked, ['/home/op', '/var/home/op']));
  });

  it('mounts its own /proc after every granted path, so no grant brings back the host’s', () => {
    const m = mounts(bwrapPlan(input({ read: ['/proc'], write: ['/'] })).prefix);
    const proc = m.findIndex(([f]) => f === '--proc');
    assert.ok(proc > m.findIndex(([, p]) => p === '/proc'), JSON.stringify(m));
    assert.ok(proc > m.findIndex(([f, p]) => f === '--bind-try' && p === '/'), JSON.stringify(m));
  });

  it('binds the proxy socket directory in read-only at its own path for an allow-list', () => {
    const plan = bwrapPlan(input({ network: { kind: 'proxy', socketDir: '/tmp/sb-net-1' } }));
    const i = plan.prefix.indexOf('/tmp/sb-net-1');
    assert.deepEqual(plan.prefix.slice(i - 1, i + 2), ['--ro-bind', '/tmp/sb-net-1', '/tmp/sb-net-1']);
    assert.ok(plan.prefix.includes('--unshare-net'));
  });

  it('resolves grant paths against the root and the home directory', () => {
    assert.equal(resolveGrantPath('data', '/ws', '/home/op'), '/ws/data');
    assert.equal(resolveGrantPath('~/.cache/x', '/ws', '/home/op'), '/home/op/.cache/x');
    assert.equal(resolveGrantPath('/etc/x', '/ws', '/home/op'), '/etc/x');
    assert.ok(isInside('/a/b', '/a') && isInside('/a', '/a') && !isInside('/ab', '/a'));
  });
});

describe('sandbox state: what is enforced', () => {
  const stdio = (extra: object = {}) => ({ transport: 'stdio', grants: [] as string[], ...extra });

  it('says enforced for files and network under bubblewrap, with the granted paths and hosts', () => {
    const none = decideSandbox(stdio(), BWRAP);
    assert.deepEqual(
      [none.bwrap, none.network, none.enforcement.filesystem, none.enforcement.network],
      [true, 'none', 'enforced', 'enforced'],
    );
    const scoped = decideSandbox(
      stdio({
        grants: ['filesystem', 'network'],
        filesystem: { read: ['/a'], write: [] },
        network: { allow: ['x.io'] },
      }),
      BWRAP,
    );
    assert.equal(scoped.network, 'proxy');
    assert.deepEqual(scoped.enforcement.allowedHosts, ['x.io']);
    assert.deepEqual(scoped.enforcement.readPaths, ['/a']);
    assert.equal(scoped.enforcement.filesystem, 'enforced');
  });

  it('says granted (full access) for a bare filesystem grant, and uses no bubblewrap with both grants bare', () => {
    const bare = decideSandbox(stdio({ grants: ['filesystem', 'network'] }), BWRAP);
    assert.equal(bare.bwrap, false);
    assert.equal(bare.enforcement.filesystem, 'granted');
    assert.match(bare.enforcement.notes.join(' '), /names no paths: full access/);
  });

  it('never runs the network-only fallback as root with capabilities: a user namespace, or setpriv dropping them', () => {
    for (const prefix of networkOnlyCandidates(true)) {
      const userNs = prefix.includes('--user');
      const dropped = prefix.includes('setpriv') && prefix[prefix.indexOf('--bounding-set') + 1] === '-all';
      assert.ok(userNs || dropped, prefix.join(' '));
      assert.equal(prefix[prefix.length - 1], '--', 'the command follows');
    }
    for (const prefix of networkOnlyCandidates(false)) assert.ok(prefix.includes('--user'), prefix.join(' '));
  });

  it('says not-enforced and why without bubblewrap; an allow-list then fails closed to no network', () => {
    const d = decideSandbox(stdio({ grants: ['network'], network: { allow: ['x.io'] } }), NO_BWRAP);
    assert.equal(d.bwrap, false);
    assert.equal(d.enforcement.filesystem, 'not-enforced');
    assert.match(d.enforcement.notes.join(' '), /not installed/);
    assert.deepEqual(d.networkOnlyPrefix, ['unshare', '--net', '--']);
    assert.match(d.enforcement.notes.join(' '), /allow-list needs bubblewrap .*no network at all/);
    assert.match(d.enforcement.notes.join(' '), /no PID namespace/);
  });
});

describe('network allow-list', () => {
  it('admits named hosts on the web ports, a named port only, and subdomains of a wildcard', () => {
    const rules = ['api.github.com', '*.example.com', '127.0.0.1:8080', '[::1]:9000'].map(parseAllowEntry);
    assert.ok(isAllowed(rules, 'API.GitHub.com.', 443) && isAllowed(rules, 'api.github.com', 80));
    assert.ok(!isAllowed(rules, 'api.github.com', 22));
    assert.ok(isAllowed(rules, 'a.b.example.com', 443) && !isAllowed(rules, 'example.com', 443));
    assert.ok(!isAllowed(rules, 'evilexample.com', 443));
    assert.ok(isAllowed(rules, '127.0.0.1', 8080) && !isAllowed(rules, '127.0.0.1', 8081));
    assert.ok(isAllowed(rules, '[::1]', 9000) && isAllowed(rules, '::1', 9000));
    assert.ok(isAllowed(rules, '[0:0:0:0:0:0:0:1]', 9000), 'IPv6 compared in one form');
  });

  it('reads a host one way only: control bytes, user info and escapes are not hosts, IDNA names are ASCII', () => {
    const rules = ['*.example.test:443', 'bücher.example', '127.0.0.1:8080'].map(parseAllowEntry);
    // The finding: the suffix matched, and the resolver stopped at the NUL and looked up localhost.
    for (const attack of [
      'localhost\u0000.example.test',
      '127.0.0.1\u0000.example.test',
      'localhost%00.example.test',
      'localhost\t.example.test',
      'localhost\r\n.example.test',
      'evil@x.example.test',
      'x.example.test/..',
      'x.example.test..',
      '.example.test',
      '..example.test',
      'x y.example.test',
      'x.example.test\\',
    ]) {
      assert.equal(canonicalHost(attack), undefined, JSON.stringify(attack));
      assert.ok(!isAllowed(rules, attack, 443), JSON.stringify(attack));
    }
    assert.ok(isAllowed(rules, 'API.Example.TEST.', 443), 'case and the trailing dot');
    assert.equal(
      canonicalHost('ｌｏｃａｌｈｏｓｔ.example.test'),
      'localhost.example.test',
      'IDNA maps full-width letters',
    );
    assert.ok(isAllowed(rules, 'xn--bcher-kva.example', 443) && isAllowed(rules, 'BÜCHER.example', 80));
    assert.equal(canonicalHost('0x7f.0.0.1'), '127.0.0.1', 'IPv4 in any notation is one address');
    assert.ok(isAllowed(rules, '0x7f.1', 8080) && !isAllowed(rules, '0x7f.1', 8081));
    assert.ok(!isAllowed(rules, '1.2.3.example.test', 80), 'not on a port the rule names');
    assert.ok(!isAllowed(['*.0.1'].map(parseAllowEntry), '127.0.0.1', 443), 'a wildcard never admits an IP address');
    assert.equal(canonicalHost('[fe80::1%eth0]'), undefined, 'no IPv6 zone');
    assert.equal(canonicalHost('[::ffff:127.0.0.1]'), '::ffff:7f00:1');
    assert.equal(canonicalHost(`${'a'.repeat(64)}.example.test`), undefined, 'a label has 63 letters at most');
  });
});

describe('schema: filesystem and network scopes', () => {
  const base = { name: 'x', command: 'node' };
  it('accepts paths and hosts next to their grant, and refuses them without it or on a remote server', () => {
    const ok = ServerDefSchema.safeParse({
      ...base,
      grants: ['filesystem', 'network'],
      filesystem: { read: ['docs'], write: ['~/out'] },
      network: { allow: ['api.github.com', '*.example.com', '127.0.0.1:8080'] },
    });
    assert.ok(ok.success, JSON.stringify(ok.error?.issues));
    const noGrant = ServerDefSchema.safeParse({ ...base, filesystem: { read: ['docs'] } });
    assert.match(noGrant.error!.issues[0].message, /add 'filesystem' to 'grants'/);
    const badHost = ServerDefSchema.safeParse({ ...base, grants: ['network'], network: { allow: ['http://x'] } });
    assert.match(badHost.error!.issues[0].message, /a host is a name/);
    const remote = ServerDefSchema.safeParse({
      name: 'r',
      transport: 'http',
      url: 'https://x.io/mcp',
      grants: ['network'],
      network: { allow: ['x.io'] },
    });
    assert.match(remote.error!.issues[0].message, /must not have 'network'/);
  });

  it('binds the paths and hosts in the approval, and hashes a definition without them as before', () => {
    const plain = ServerDefSchema.parse({ ...base, grants: ['filesystem'] });
    assert.deepEqual(normalizeForApproval(plain, '/ws', null).grants, ['filesystem']);
    const scoped = ServerDefSchema.parse({ ...base, grants: ['filesystem'], filesystem: { write: ['b', 'a'] } });
    assert.deepEqual(normalizeForApproval(scoped, '/ws', null).grants, [
      'filesystem',
      'filesystem.write=a',
      'filesystem.write=b',
    ]);
  });
});

describe('enforcement as the tree tooltip words it', () => {
  const base = { network: 'enforced', filesystem: 'enforced', secrets: 'enforced', notes: [] } as const;
  const lines = (grants: string[], enforcement: object) =>
    enforcementLines({ grants, enforcement: { ...base, ...enforcement } } as unknown as ServerStatus);

  it('names the sandbox, the granted paths and the allowed hosts; says plainly where nothing is enforced', () => {
    const sandboxed =
      'filesystem: sandboxed (reads the system and the registry root; writes only its own temp dir; no home)';
    assert.ok(lines([], {}).includes(sandboxed));
    const scoped = lines(['filesystem', 'network'], { readPaths: ['/a'], writePaths: ['/b'], allowedHosts: ['x.io'] });
    assert.ok(scoped.includes('filesystem: sandboxed, plus /a (read), /b (write)'));
    assert.ok(scoped.includes("network: only x.io (through the broker's proxy)"));
    assert.ok(lines([], { filesystem: 'not-enforced' }).some((l) => /not restricted here/.test(l)));
    assert.deepEqual(lines(['filesystem', 'network', 'secrets'], { filesystem: 'granted', network: 'granted' }), []);
    assert.ok(
      lines(['network'], { network: 'enforced' }).some((l) => /blocked \(its allow-list needs bubblewrap/.test(l)),
    );
  });
});
