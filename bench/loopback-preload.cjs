// Preloaded (`node --require bench/loopback-preload.cjs ...`) into the peer gateways the bench
// starts. It keeps them on the loopback interface and off the network:
//  - every net.Server.listen() binds 127.0.0.1, whatever host (or none) the peer asked for;
//  - outgoing TCP/TLS connections to anything but loopback fail (mcp-hub fetches a marketplace
//    list at start; the bench pre-seeds its cache, and this makes sure nothing leaves the host);
//  - `curl` (mcp-hub's fallback when fetch fails) is refused.
'use strict';
const net = require('node:net');
const tls = require('node:tls');
const cp = require('node:child_process');
const { syncBuiltinESMExports } = require('node:module');

const LOOPBACK = '127.0.0.1';
const isLoopback = (h) =>
  h === undefined ||
  h === null ||
  h === '' ||
  h === 'localhost' ||
  h === '::1' ||
  h === '[::1]' ||
  /^127\./.test(String(h));

const origListen = net.Server.prototype.listen;
net.Server.prototype.listen = function listen(...args) {
  const a0 = args[0];
  if (
    a0 !== null &&
    typeof a0 === 'object' &&
    !Array.isArray(a0) &&
    !(a0 instanceof net.Server) &&
    a0.path === undefined &&
    a0.fd === undefined &&
    a0._handle === undefined
  ) {
    args[0] = { ...a0, host: LOOPBACK };
  } else if (
    typeof a0 === 'number' ||
    (typeof a0 === 'string' && /^\d+$/.test(a0)) ||
    a0 === undefined ||
    a0 === null
  ) {
    // listen(port[, host][, backlog][, cb]) — replace or insert the host
    if (typeof args[1] === 'string') args[1] = LOOPBACK;
    else args.splice(1, 0, LOOPBACK);
    if (args[0] === undefined || args[0] === null) args[0] = 0;
  }
  return origListen.apply(this, args);
};

function hostOf(args) {
  const a0 = args[0];
  if (a0 && typeof a0 === 'object') return a0.path !== undefined ? 'localhost' : (a0.host ?? a0.hostname);
  if (typeof a0 === 'string' && !/^\d+$/.test(a0)) return 'localhost'; // a unix socket path
  return typeof args[1] === 'string' ? args[1] : undefined;
}
function guard(mod, name) {
  const orig = mod[name];
  mod[name] = function guarded(...args) {
    const host = hostOf(args);
    if (!isLoopback(host)) throw new Error(`bench loopback guard: refused a connection to ${host}`);
    return orig.apply(this, args);
  };
}
guard(net, 'connect');
guard(net, 'createConnection');
guard(tls, 'connect');

for (const name of ['exec', 'execSync']) {
  const orig = cp[name];
  cp[name] = function guardedExec(command, ...rest) {
    if (/^\s*curl\b/.test(String(command))) {
      const err = new Error('bench loopback guard: curl refused');
      if (name === 'execSync') throw err;
      const cb = rest.find((r) => typeof r === 'function');
      if (cb) process.nextTick(cb, err, '', '');
      return undefined;
    }
    return orig.call(this, command, ...rest);
  };
  const custom = require('node:util').promisify.custom;
  if (orig[custom]) {
    cp[name][custom] = (command, ...rest) =>
      /^\s*curl\b/.test(String(command))
        ? Promise.reject(new Error('bench loopback guard: curl refused'))
        : orig[custom](command, ...rest);
  }
}
syncBuiltinESMExports();
