// The level a broker log line gets in the editor's log channel (src/extension/brokerLogLevel.ts).
import * as assert from 'node:assert/strict';
import { brokerLineLevel } from '../../src/extension/brokerLogLevel';

describe('extension: broker log levels', () => {
  it('gives registry problems, fatal exits and stack traces their level', () => {
    assert.equal(brokerLineLevel('[switchboard] mcp-servers.d/x.yaml:3:1: error: unknown key "comand"'), 'error');
    assert.equal(brokerLineLevel('[switchboard] mcp-servers.d/x.yaml:1:10: warning: plain http://'), 'warn');
    assert.equal(brokerLineLevel('switchboard: port 80 is in use'), 'error');
    assert.equal(brokerLineLevel('TypeError: x is not a function'), 'error');
    assert.equal(brokerLineLevel('    at Foo.bar (/x/dist/broker.js:10:5)'), 'error');
    assert.equal(brokerLineLevel('(node:123) ExperimentalWarning: something'), 'warn');
    assert.equal(brokerLineLevel('[switchboard] SIGTERM: stopping upstreams'), 'info');
    // A server *named* error is not an error line.
    assert.equal(brokerLineLevel('[switchboard] started server error-reporter'), 'info');
  });
});
