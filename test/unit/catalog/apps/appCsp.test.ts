// The CSP put on an app's page from its declared _meta.ui.csp.
import assert from 'node:assert/strict';
import { pageCsp } from '../../../../src/broker/catalog/apps/appCsp';

describe('apps: the CSP of an app’s page', () => {
  it('allows nothing outside the page when nothing is declared', () => {
    const csp = pageCsp(undefined);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /connect-src 'none'/);
    assert.match(csp, /frame-src 'none'/);
    assert.equal(pageCsp({ csp: {} }), csp);
  });

  it('maps each declared list to its directives', () => {
    const csp = pageCsp({
      csp: {
        connectDomains: ['https://api.example'],
        resourceDomains: ['https://cdn.example'],
        frameDomains: ['https://www.youtube.com'],
      },
    });
    assert.match(csp, /connect-src https:\/\/api.example(;|$)/);
    assert.match(csp, /script-src 'unsafe-inline' https:\/\/cdn.example/);
    assert.match(csp, /img-src data: https:\/\/cdn.example/);
    assert.match(csp, /frame-src https:\/\/www.youtube.com/);
    assert.ok(!/connect-src[^;]*cdn/.test(csp), csp);
  });

  it('drops a declared entry that is not one origin (it could add a directive)', () => {
    const csp = pageCsp({
      csp: { connectDomains: ['https://a.example; script-src *', "'unsafe-eval'", 'https://b.example'] },
    });
    assert.match(csp, /connect-src https:\/\/b.example(;|$)/);
    assert.ok(!csp.includes('unsafe-eval') && !csp.includes('script-src *'), csp);
  });
});
