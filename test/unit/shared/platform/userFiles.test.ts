// Per-user files on each OS: where they live, and the Windows ACL that stands in for mode 0600.
import assert from 'node:assert/strict';
import {
  icaclsPrivateArgs,
  perUserHome,
  privateProtection,
  windowsAccount,
} from '../../../../src/broker/shared/platform/userFiles';

describe('platform: per-user files', () => {
  it('lives in %LOCALAPPDATA%\\Switchboard on Windows (local, not roaming), ~/.switchboard elsewhere', () => {
    const env = { LOCALAPPDATA: 'C:\\Users\\Op Name\\AppData\\Local', APPDATA: 'C:\\Users\\Op Name\\AppData\\Roaming' };
    assert.equal(perUserHome('win32', env, 'C:\\Users\\Op Name'), 'C:\\Users\\Op Name\\AppData\\Local\\Switchboard');
    assert.equal(perUserHome('win32', {}, 'C:\\Users\\op'), 'C:\\Users\\op\\AppData\\Local\\Switchboard');
    assert.equal(perUserHome('linux', {}, '/home/op'), '/home/op/.switchboard');
    assert.equal(perUserHome('darwin', {}, '/Users/op'), '/Users/op/.switchboard');
  });

  it('honours SWITCHBOARD_HOME everywhere (Windows spelling of the name ignored)', () => {
    assert.equal(perUserHome('linux', { SWITCHBOARD_HOME: '/tmp/sb' }, '/home/op'), '/tmp/sb');
    assert.equal(perUserHome('win32', { Switchboard_Home: 'D:\\sb' }, 'C:\\Users\\op'), 'D:\\sb');
  });

  it('grants the user alone full control and drops inherited entries (icacls, no shell involved)', () => {
    assert.deepEqual(icaclsPrivateArgs('C:\\Users\\op\\AppData\\Local\\Switchboard\\t.token', 'CORP\\op'), [
      'C:\\Users\\op\\AppData\\Local\\Switchboard\\t.token',
      '/inheritance:r',
      '/grant:r',
      'CORP\\op:F',
    ]);
    assert.deepEqual(icaclsPrivateArgs('C:\\sb\\tokens', 'op', 'directory'), [
      'C:\\sb\\tokens',
      '/inheritance:r',
      '/grant:r',
      'op:(OI)(CI)F',
    ]);
  });

  it('names the account with its domain when known, and refuses an unusable name', () => {
    assert.equal(windowsAccount({ USERNAME: 'op', USERDOMAIN: 'CORP' }), 'CORP\\op');
    assert.equal(windowsAccount({ username: 'op' }), 'op');
    assert.equal(windowsAccount({}), undefined);
    assert.throws(() => icaclsPrivateArgs('C:\\f', 'op"\r\nx'), /account name/);
    assert.throws(() => icaclsPrivateArgs('C:\\f', ' '), /USERNAME/);
  });

  it('protects per-user files by mode on Linux and macOS, by an ACL naming the user on Windows', () => {
    for (const platform of ['linux', 'darwin'] as const) {
      assert.deepEqual(privateProtection(platform, {}, '/home/op/.switchboard/audit.jsonl'), {
        how: 'mode',
        mode: 0o600,
      });
      assert.deepEqual(privateProtection(platform, {}, '/home/op/.switchboard', 'directory'), {
        how: 'mode',
        mode: 0o700,
      });
    }
    const env = { USERNAME: 'Op Name', USERDOMAIN: 'CORP' };
    const log = 'C:\\Users\\Op Name\\AppData\\Local\\Switchboard\\workspaces\\0123\\broker.log';
    assert.deepEqual(privateProtection('win32', env, log), {
      how: 'acl',
      command: 'icacls',
      args: [log, '/inheritance:r', '/grant:r', 'CORP\\Op Name:F'],
    });
    const aclArgs = (target: string, kind: 'file' | 'directory') => {
      const how = privateProtection('win32', env, target, kind);
      if (how.how !== 'acl') throw new Error(`expected an ACL on Windows, got ${JSON.stringify(how)}`);
      return how.args;
    };
    assert.equal(aclArgs(`${log}.1`, 'file')[0], `${log}.1`, 'the rotated copy too');
    assert.equal(aclArgs('C:\\sb\\workspaces', 'directory').at(-1), 'CORP\\Op Name:(OI)(CI)F');
    assert.throws(() => privateProtection('win32', {}, log), /set USERNAME/);
  });
});
