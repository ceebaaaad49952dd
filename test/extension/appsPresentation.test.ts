// The Servers view's lines for a server's MCP Apps (pure).
import assert from 'node:assert/strict';
import type { ServerStatus } from '../../src/broker/control/controlApi';
import { appLines, cspWords } from '../../src/extension/appsPresentation';

const counter = {
  uri: 'ui://counter/view.html',
  aggregatedUri: 'ui://shop/counter/view.html',
  title: 'Counter',
  tools: ['show_counter', 'increment'],
  appOnlyTools: ['increment'],
  ui: { csp: { connectDomains: ['https://api.example'] } },
  held: false,
};

describe('extension: MCP Apps in the Servers view', () => {
  it('names the page, the tools that open it and those only its page calls; the CSP in the tooltip', () => {
    const [line] = appLines({ apps: [counter] } as unknown as ServerStatus);
    assert.equal(line.label, 'Counter');
    assert.equal(line.description, 'opened by show_counter; its page calls increment');
    assert.match(line.tooltip, /ui:\/\/shop\/counter\/view.html/);
    assert.match(line.tooltip, /connects to https:\/\/api.example; loads from nothing outside the page/);
    assert.equal(line.held, false);
  });

  it('says when a page is held after a change; a server without apps has no lines', () => {
    const [line] = appLines({ apps: [{ ...counter, held: true }] } as unknown as ServerStatus);
    assert.equal(line.description, 'held: changed since approval');
    assert.match(line.tooltip, /Review Tool Changes/);
    assert.deepEqual(appLines({} as ServerStatus), []);
    assert.equal(cspWords(undefined), 'connects to nothing; loads from nothing outside the page');
  });
});
