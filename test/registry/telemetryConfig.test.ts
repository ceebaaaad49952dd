// telemetry.yaml: the registry's `telemetry:` block, its defaults, and its mistakes with their lines.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseTelemetryFile, readTelemetryFile, TELEMETRY_FILE } from '../../src/registry/telemetryConfig';

describe('telemetry.yaml', () => {
  it('reads the block with its defaults', () => {
    const r = parseTelemetryFile('telemetry:\n  endpoint: http://127.0.0.1:4318\n', 'telemetry.yaml');
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.block, { enabled: true, endpoint: 'http://127.0.0.1:4318', traces: true, metrics: true });
  });

  it('reports an unknown key and a wrong value on their own lines', () => {
    const text = 'telemetry:\n  enabled: true\n  protocol: carrier-pigeon\n  endpont: http://x\n';
    const r = parseTelemetryFile(text, '/r/telemetry.yaml');
    assert.equal(r.block, undefined, 'a file with errors turns nothing on');
    const lines = r.problems.map((p) => [p.line, p.file]);
    assert.deepEqual(
      lines.sort((a, b) => Number(a[0]) - Number(b[0])),
      [
        [3, '/r/telemetry.yaml'],
        [4, '/r/telemetry.yaml'],
      ],
    );
    assert.ok(r.problems.some((p) => p.message.includes('telemetry.protocol')));
    // Positive control: each protocol the exporters speak, gRPC included, is accepted.
    for (const protocol of ['grpc', 'http/protobuf', 'http/json']) {
      const ok = parseTelemetryFile(`telemetry:\n  enabled: true\n  protocol: ${protocol}\n`, '/r/telemetry.yaml');
      assert.deepEqual(ok.problems, [], protocol);
    }
  });

  it('refuses an endpoint that is not http(s) and a YAML syntax error, with the line', () => {
    assert.equal(parseTelemetryFile('telemetry:\n  endpoint: file:///etc/passwd\n', 'f').problems[0].line, 2);
    assert.equal(parseTelemetryFile('telemetry:\n  enabled: [\n', 'f').problems.length > 0, true);
  });

  it('no file: no block and no problem', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-telemetry-'));
    try {
      assert.deepEqual(readTelemetryFile(root), { problems: [] });
      fs.writeFileSync(path.join(root, TELEMETRY_FILE), 'telemetry:\n  enabled: false\n');
      assert.equal(readTelemetryFile(root).block?.enabled, false);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
