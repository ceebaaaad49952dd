// macOS sandbox-exec profile and prefix, and the honest reason where no network block exists.
import assert from 'node:assert/strict';
import {
  networkNotEnforcedReason,
  sandboxExecPrefix,
  sandboxProfile,
} from '../../../../src/broker/shared/platform/macSandbox';
import { describeEnforcement } from '../../../../src/broker/trust/sandbox';

describe('platform: macOS sandbox and Windows enforcement', () => {
  it('denies inet sockets but keeps Unix-domain sockets without the network grant', () => {
    const profile = sandboxProfile({ network: false });
    assert.match(profile, /^\(version 1\)\n\(allow default\)\n/);
    assert.match(profile, /\(deny network\*\)/);
    assert.match(profile, /\(allow network\* \(remote unix-socket\)\)/);
    assert.doesNotMatch(sandboxProfile({ network: true }), /deny/);
  });

  it('runs the command after the profile, as sandbox-exec expects', () => {
    const prefix = sandboxExecPrefix('(version 1)');
    assert.deepEqual(prefix, ['/usr/bin/sandbox-exec', '-p', '(version 1)']);
  });

  it('says why the network is not blocked on Windows, in words', () => {
    assert.match(networkNotEnforcedReason('win32'), /administrator/);
    assert.match(networkNotEnforcedReason('darwin'), /sandbox-exec/);
    assert.match(networkNotEnforcedReason('freebsd'), /freebsd/);
  });

  it('reports a stdio server under a sandbox prefix as enforced, and without one as not-enforced', () => {
    const stdio = { transport: 'stdio', grants: [] };
    const macPrefix = sandboxExecPrefix(sandboxProfile({ network: false }));
    const mac = describeEnforcement(stdio, { bwrapUnavailable: 'bubblewrap is Linux only', networkOnly: macPrefix });
    assert.equal(mac.network, 'enforced');
    assert.equal(mac.filesystem, 'not-enforced');
    assert.match(mac.notes.join(' '), /file access is not restricted: bubblewrap is Linux only/);
    const none = describeEnforcement(stdio, { bwrapUnavailable: 'no', networkOnly: null });
    assert.equal(none.network, 'not-enforced');
    assert.match(none.notes.join(' '), /cannot be blocked on this system/);
  });
});
