// Per-user files on real disk (Linux here): every one is 0600 in a 0700 directory when created, when
// an older, wider copy is reopened, and after rotation. Windows' ACL counterpart is pure logic, tested
// in platform-files.test.ts with the platform as a parameter.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AuditLog } from '../../../src/broker/routing/audit';
import { openBrokerLog } from '../../../src/broker/daemon/brokerLog';
import { openPrivateAppend, writePrivateFile } from '../../../src/broker/shared/privateFiles';
import { onlyOn } from '../../helpers/platform';

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

onlyOn(['linux', 'darwin'], 'POSIX file modes; Windows uses an ACL set by icacls, which Wine only stubs').describe(
  'unit: private per-user files on disk',
  function () {
    let dir: string;
    let umask: number;
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-private-'));
      // The most permissive umask: whatever is private below was made so by the code, not by the umask.
      umask = process.umask(0);
    });
    afterEach(() => {
      process.umask(umask);
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('writes a file 0600 in a 0700 directory, also over a wider file', () => {
      const file = path.join(dir, 'state', 'approvals.json');
      writePrivateFile(file, '{}\n');
      assert.equal(modeOf(file), 0o600);
      assert.equal(modeOf(path.dirname(file)), 0o700);
      fs.chmodSync(file, 0o644);
      writePrivateFile(file, '{"a":1}\n');
      assert.equal(modeOf(file), 0o600);
    });

    it('opens a new file for appending 0600, and narrows an existing 0644 one before writing to it', () => {
      const file = path.join(dir, 'ws', 'audit.jsonl');
      fs.closeSync(openPrivateAppend(file));
      assert.equal(modeOf(file), 0o600);
      assert.equal(modeOf(path.dirname(file)), 0o700);
      fs.chmodSync(file, 0o644);
      fs.chmodSync(path.dirname(file), 0o755);
      fs.closeSync(openPrivateAppend(file));
      assert.equal(modeOf(file), 0o600);
      assert.equal(modeOf(path.dirname(file)), 0o700);
    });

    it('keeps the audit log and its rotated copy 0600, even when an older version left them 0644', () => {
      const file = path.join(dir, 'ws', 'audit.jsonl');
      fs.mkdirSync(path.dirname(file), { mode: 0o755 });
      fs.writeFileSync(file, '{"at":"old"}\n', { mode: 0o644 });
      fs.chmodSync(file, 0o644);
      const audit = new AuditLog(file, () => [], 200);
      audit.write({ event: 'call', tool: 'echo__echo' });
      audit.flush();
      assert.equal(modeOf(file), 0o600, 'the old wide log is narrowed when the broker opens it');
      assert.equal(modeOf(path.dirname(file)), 0o700);
      fs.chmodSync(file, 0o644); // as if left wide again: rotation must not carry that into .1
      for (let i = 0; i < 5; i++) {
        audit.write({ event: 'call', tool: 'echo__echo', i, padding: 'x'.repeat(40) });
        audit.flush();
      }
      audit.close();
      assert.ok(fs.existsSync(`${file}.1`), 'the log rotated');
      assert.equal(modeOf(`${file}.1`), 0o600);
      assert.equal(modeOf(file), 0o600, 'the new log after rotation');
      assert.match(fs.readFileSync(file, 'utf8'), /"i":4/);
    });

    it('keeps the broker log and its rotated copy 0600', () => {
      const file = path.join(dir, 'ws', 'broker.log');
      fs.mkdirSync(path.dirname(file), { mode: 0o755 });
      fs.writeFileSync(file, 'x'.repeat(101), { mode: 0o644 });
      const first = openBrokerLog(file, 100);
      fs.closeSync(first.fd);
      assert.equal(first.startOffset, 0, 'a rotated log starts empty');
      assert.equal(fs.readFileSync(`${file}.1`, 'utf8').length, 101);
      assert.equal(modeOf(`${file}.1`), 0o600);
      assert.equal(modeOf(file), 0o600);
      assert.equal(modeOf(path.dirname(file)), 0o700);

      fs.writeFileSync(file, 'small\n');
      fs.chmodSync(file, 0o644);
      const second = openBrokerLog(file, 100);
      fs.closeSync(second.fd);
      assert.equal(second.startOffset, 6, 'a small log is appended to');
      assert.equal(modeOf(file), 0o600);
    });
  },
);
