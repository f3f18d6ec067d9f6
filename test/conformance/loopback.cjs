// Preloaded into the conformance suite's node (NODE_OPTIONS=--require) by
// surface_test.go, so that a test run opens no port beyond loopback: the
// suite's mock servers call listen(0), which binds every interface, and
// read address().port on the next line. This adds host 127.0.0.1 to a
// listen given no host. Node looks a host up before it binds, even an IP
// literal, and answers on a later tick; address() would then still be
// null. So, within that one listen call only, the lookup of the literal
// 127.0.0.1 answers at once and the bind stays synchronous as the suite
// expects. Any other listen, and every other lookup, is left alone.
'use strict';
const dns = require('dns');
const net = require('net');
const loopback = '127.0.0.1';
const listen = net.Server.prototype.listen;
const lookup = dns.lookup;
let binding = false;
dns.lookup = function (host, options, callback) {
  if (binding && host === loopback) {
    // Node 22's listen asks for every address ({all: true}).
    if (typeof options === 'function') {
      options(null, loopback, 4);
    } else if (options && options.all) {
      callback(null, [{ address: loopback, family: 4 }]);
    } else {
      callback(null, loopback, 4);
    }
    return {};
  }
  return lookup.apply(this, arguments);
};
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] !== 'number' || typeof args[1] === 'string') {
    return listen.apply(this, args);
  }
  args.splice(1, 0, loopback);
  binding = true;
  try {
    return listen.apply(this, args);
  } finally {
    binding = false;
  }
};
