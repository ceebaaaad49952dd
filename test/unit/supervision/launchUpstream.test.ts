// The one launch path: what a definition becomes for start, restart and probe alike.
import assert from 'node:assert/strict';
import { ServerDefSchema } from '../../../src/registry/schema';
import { planLaunch } from '../../../src/broker/supervision/launchUpstream';
import { whyProbeIsRefused } from '../../../src/broker/supervision/probe';
import * as path from 'node:path';

const parentEnv = { PATH: '/usr/bin', HOME: '/home/op', GITHUB_TOKEN: 'ghp_parent_token_value' };
const UNSHARE = ['unshare', '--net', '--map-current-user', '--'];

function def(extra: Record<string, unknown>) {
  return ServerDefSchema.parse({ name: 'x', command: 'node', args: ['server.js'], ...extra });
}

describe('launch plan', () => {
  it('runs a stdio server in the root (or its cwd) under the network sandbox when it has no network grant', () => {
    const plan = planLaunch(def({ cwd: 'sub' }), '/root/ws', { parentEnv, networkIsolation: UNSHARE });
    assert.equal(plan.launch.transport, 'stdio');
    if (plan.launch.transport !== 'stdio') return;
    assert.equal(plan.launch.command, 'node');
    assert.deepEqual(plan.launch.args, ['server.js']);
    assert.equal(plan.launch.cwd, path.resolve('/root/ws', 'sub'), 'the host resolves it (a drive on Windows)');
    assert.deepEqual(plan.launch.wrapper, UNSHARE);
    assert.equal(plan.enforcement.network, 'enforced');
  });

  it('runs it without the sandbox with the network grant, or where the OS cannot isolate, and says so', () => {
    const granted = planLaunch(def({ grants: ['network'] }), '/ws', { parentEnv, networkIsolation: UNSHARE });
    assert.equal(granted.launch.transport === 'stdio' && granted.launch.wrapper, undefined);
    assert.equal(granted.enforcement.network, 'granted');
    const unable = planLaunch(def({}), '/ws', { parentEnv, networkIsolation: null });
    assert.equal(unable.launch.transport === 'stdio' && unable.launch.wrapper, undefined);
    assert.equal(unable.enforcement.network, 'not-enforced');
    assert.ok(unable.enforcement.notes.some((n) => /cannot be blocked/.test(n)));
  });

  it('builds the environment by the grants and redacts the secrets it resolved', () => {
    const d = def({ env: { GH: '${env:GITHUB_TOKEN}' } });
    const without = planLaunch(d, '/ws', { parentEnv, networkIsolation: null });
    assert.deepEqual(without.withheld, ['GITHUB_TOKEN']);
    assert.equal(without.launch.transport === 'stdio' && without.launch.env.GH, '');
    const granted = planLaunch({ ...d, grants: ['secrets'] }, '/ws', { parentEnv, networkIsolation: null });
    assert.equal(granted.launch.transport === 'stdio' && granted.launch.env.GH, 'ghp_parent_token_value');
    assert.equal(granted.redactor.redact('it printed ghp_parent_token_value'), 'it printed [redacted]');
  });

  it('reaches a remote server with its headers, whose values are redacted', () => {
    const plan = planLaunch(
      ServerDefSchema.parse({
        name: 'r',
        transport: 'http',
        url: 'https://mcp.example/mcp',
        headers: { authorization: 'Bearer abcdef123456' },
      }),
      '/ws',
    );
    assert.deepEqual(plan.launch, {
      transport: 'http',
      url: 'https://mcp.example/mcp',
      headers: { authorization: 'Bearer abcdef123456' },
    });
    assert.equal(plan.redactor.redact('sent Bearer abcdef123456'), 'sent [redacted]');
    assert.equal(plan.enforcement.network, 'not-enforced');
  });

  it('sends credentials in a remote URL as Basic authentication and redacts them', () => {
    const plan = planLaunch(
      ServerDefSchema.parse({
        name: 'r',
        transport: 'http',
        url: 'https://al%20ice:pa55word-x@mcp.example/mcp?api_key=k3y-123456',
      }),
      '/ws',
    );
    assert.deepEqual(plan.launch, {
      transport: 'http',
      url: 'https://mcp.example/mcp?api_key=k3y-123456',
      headers: { authorization: `Basic ${Buffer.from('al ice:pa55word-x').toString('base64')}` },
    });
    const shown = plan.redactor.redact(
      `GET ${plan.launch.transport === 'http' ? plan.launch.url : ''} pa55word-x ${Buffer.from('al ice:pa55word-x').toString('base64')}`,
    );
    assert.equal(shown, 'GET https://mcp.example/mcp?api_key=[redacted] [redacted] [redacted]');
  });
});

describe('who may probe what', () => {
  const saved = def({ trust: 'trusted' });

  it('lets a client probe a trusted definition only when it is the saved one, as it is', () => {
    assert.equal(whyProbeIsRefused(def({ trust: 'trusted' }), saved, 'not-needed'), undefined);
    const changed = whyProbeIsRefused(def({ trust: 'trusted', args: ['other.js'] }), saved, 'not-needed');
    assert.match(changed ?? '', /differs from the saved trusted definition of 'x'.*operator/);
    const unsaved = whyProbeIsRefused(def({ trust: 'builtin' }), undefined, 'not-needed');
    assert.match(unsaved ?? '', /is builtin but not in the registry/);
  });

  it('lets a client probe a community definition only when the operator approved it as it is', () => {
    const community = def({ trust: 'community' });
    assert.equal(whyProbeIsRefused(community, undefined, 'approved'), undefined);
    assert.match(whyProbeIsRefused(community, undefined, 'required') ?? '', /has not been approved by the operator/);
    assert.match(
      whyProbeIsRefused(community, undefined, 'changed') ?? '',
      /differs from the one the operator approved/,
    );
  });
});
