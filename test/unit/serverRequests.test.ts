// Which client capability a server→client request needs, and whether declared capabilities cover
// it (an empty `elicitation` object means form mode, as the spec keeps for older clients).
import assert from 'node:assert/strict';
import { declares, neededCapability } from '../../src/broker/serverRequestDispatch';

describe('server→client requests: the capability a request needs', () => {
  it('names the capability per method and mode', () => {
    assert.equal(neededCapability({ method: 'sampling/createMessage', params: { messages: [] } }), 'sampling');
    assert.equal(neededCapability({ method: 'sampling/createMessage', params: { tools: [] } }), 'sampling.tools');
    assert.equal(neededCapability({ method: 'elicitation/create', params: { message: 'm' } }), 'elicitation.form');
    assert.equal(neededCapability({ method: 'elicitation/create', params: { mode: 'form' } }), 'elicitation.form');
    assert.equal(neededCapability({ method: 'elicitation/create', params: { mode: 'url' } }), 'elicitation.url');
    assert.equal(neededCapability({ method: 'roots/list', params: {} }), 'roots');
  });

  it('checks declared capabilities, sub-capabilities and the empty elicitation object', () => {
    assert.equal(declares(undefined, 'sampling'), false);
    assert.equal(declares({}, 'roots'), false);
    assert.equal(declares({ roots: {} }, 'roots'), true);
    assert.equal(declares({ sampling: {} }, 'sampling'), true);
    assert.equal(declares({ sampling: {} }, 'sampling.tools'), false);
    assert.equal(declares({ sampling: { tools: {} } }, 'sampling.tools'), true);
    assert.equal(declares({ elicitation: {} }, 'elicitation.form'), true);
    assert.equal(declares({ elicitation: {} }, 'elicitation.url'), false);
    assert.equal(declares({ elicitation: { url: {} } }, 'elicitation.form'), false);
    assert.equal(declares({ elicitation: { form: {}, url: {} } }, 'elicitation.url'), true);
  });
});
