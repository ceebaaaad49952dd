// Preloaded into every Windows Node under Wine (npm run test:windows, through NODE_OPTIONS): Wine 8 does
// not implement the socket option behind setKeepAlive, so every fetch fails with `connect UNKNOWN`.
// Keep-alive probes change nothing a test looks at; on real Windows this file is never loaded.
require('node:net').Socket.prototype.setKeepAlive = function setKeepAlive() {
  return this;
};
