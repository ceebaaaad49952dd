#!/usr/bin/env node
// The CLI is the broker bundle: `switchboard serve|connect|status|...`.
require('../dist/broker.js');
