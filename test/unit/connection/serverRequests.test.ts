// Which client capability a server→client request needs, and whether declared capabilities cover
// it (an empty `elicitation` object means form mode, as the spec keeps for older clients); which
// editor session answers, the roots it adds, and call timers paused while a person answers.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CallTimer } from '../../../src/broker/connection/callTimer';
import { holdTimers } from '../../../src/broker/connection/serverRequests';
import {
  EDITOR_CAPABILITY,
  EditorLink,
  isEditorSession,
  type EditorSession,
} from '../../../src/broker/supervision/editorLink';
import {
  declares,
  neededCapability,
  ServerRequestDispatch,
} from '../../../src/broker/supervision/serverRequestDispatch';

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

describe('server→client requests: the editor link, roots and paused call timers', () => {
  const caller = (session: string, reachable = true): EditorSession => ({
    session,
    client: 'editor',
    capabilities: () => ({ elicitation: { form: {} } }),
    reachable: () => reachable,
    ask: () => Promise.resolve({}),
  });

  it('the newest reachable editor session answers; one that left or lost its stream does not', () => {
    const link = new EditorLink();
    assert.equal(link.current(), undefined);
    link.join(caller('a'));
    link.join(caller('b', false));
    assert.equal(link.current()?.session, 'a', 'b has no open stream yet');
    link.join(caller('c'));
    assert.equal(link.current()?.session, 'c');
    link.leave('c');
    assert.equal(link.current()?.session, 'a');
  });

  it('is an editor only with the operator token and the declared capability', () => {
    const declared = { elicitation: {}, experimental: { [EDITOR_CAPABILITY]: {} } };
    assert.equal(isEditorSession(true, declared), true);
    assert.equal(isEditorSession(false, declared), false, 'an agent that claims it');
    assert.equal(isEditorSession(true, { elicitation: {} }), false, 'an operator session that did not ask to be');
  });

  it("the editor's roots: emitted only on change; the registry root first, no duplicates", () => {
    const link = new EditorLink();
    let changes = 0;
    link.on('roots', () => changes++);
    const root = path.resolve('/tmp/registry-root');
    const dispatch = new ServerRequestDispatch(
      { name: 'x', trust: 'trusted', clientFeatures: { elicitation: 'caller', sampling: 'caller' } },
      root,
      () => undefined,
      link,
    );
    const rootUri = pathToFileURL(root).href;
    assert.equal(link.setRoots([{ uri: 'file:///work/a', name: 'a' }, { uri: rootUri }]), true);
    assert.equal(link.setRoots([{ uri: 'file:///work/a', name: 'a' }, { uri: rootUri }]), false);
    assert.equal(changes, 1);
    assert.deepEqual(dispatch.registryRoots().roots, [
      { uri: rootUri, name: 'workspace registry root' },
      { uri: 'file:///work/a', name: 'a' },
    ]);
  });

  it('a paused call timer does not fire; once resumed it runs its whole limit again, then fires', async () => {
    let fired = 0;
    const timer = new CallTimer(30, () => fired++);
    timer.pause();
    timer.pause(); // two requests of one call pending at once
    await new Promise((r) => setTimeout(r, 100));
    timer.resume();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(fired, 0, 'one request still pending');
    timer.resume();
    while (fired === 0) await new Promise((r) => setTimeout(r, 10));
    assert.equal(fired, 1);
    timer.resume(); // more resumes than pauses change nothing
    timer.refresh();
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(fired, 1);
  });

  it("holds the timers of the asked callers' sessions only, and releases them once", () => {
    const log: string[] = [];
    const timer = (name: string) => ({
      pause: () => log.push(`pause ${name}`),
      resume: () => log.push(`resume ${name}`),
    });
    const entries = [
      { caller: caller('s1'), timer: timer('s1-call') },
      { caller: caller('s2'), timer: timer('s2-call') },
      { timer: timer('no-caller') },
    ];
    const release = holdTimers(entries, [caller('s1')]);
    release();
    release();
    assert.deepEqual(log, ['pause s1-call', 'resume s1-call']);
  });
});
