// Preload (`node -r ./loopback.js server.js`) that keeps a Node server on the loopback interface.
//
// kinesis-mock binds 0.0.0.0 and gives no option to change that, and the tests must never listen on
// anything but 127.0.0.1. Every TCP listen() of this process (net, http, https, tls and http2 servers
// all go through net.Server.prototype.listen) gets its host replaced by LOOPBACK_HOST (default
// 127.0.0.1). Unix sockets and inherited handles are left alone.
//
// It also hides from the server the connections a client reset before the server took them (see
// dropResetConnections), and makes SIGTERM/SIGINT stop the server promptly. kinesis-mock's graceful shutdown
// waits, with no limit, until every client has closed its connection, and test clients keep idle keep-alive
// connections open. Destroying those sockets does not help (its connection handlers then wait for an end-of-
// stream that never comes), so on the signal each open connection (and any new one) is given an end-of-stream
// as if the client had closed it; the server then finishes and closes it itself, and the program's own
// shutdown runs as usual.
'use strict'

const net = require('net')

const HOST = process.env.LOOPBACK_HOST || '127.0.0.1'
const originalListen = net.Server.prototype.listen
const openSockets = new Set()
const trackedServers = new WeakSet()
let stopping = false

function isPipeName(value) {
  return typeof value === 'string' && !/^\d+$/.test(value)
}

// Ends the readable side of a server-side socket, as a FIN from the client would.
function endInput(socket) {
  try {
    socket.push(null)
  } catch (err) {
    socket.destroy()
  }
}

// A connection the client reset before the server took it (a SIGKILLed Spark driver's, say) reaches the server with
// no remote address. kinesis-mock's server loop fails on such a socket and closes its listening socket, while the
// process lives on: every later client is refused. The server never sees those connections: they are already gone.
function dropResetConnections(server) {
  const emit = server.emit
  server.emit = function emitLiveConnections(event, socket, ...rest) {
    if (event === 'connection' && socket && socket.remoteAddress === undefined) {
      socket.destroy()
      return false
    }
    return emit.call(this, event, socket, ...rest)
  }
}

function track(server) {
  if (trackedServers.has(server)) return
  trackedServers.add(server)
  dropResetConnections(server)
  server.on('connection', (socket) => {
    if (stopping) {
      endInput(socket)
      return
    }
    openSockets.add(socket)
    socket.once('close', () => openSockets.delete(socket))
  })
}

net.Server.prototype.listen = function listenOnLoopback(...args) {
  const first = args[0]
  if (first !== null && typeof first === 'object') {
    // listen(options[, callback]), unless it is a handle or a Unix socket path.
    const isHandle = first._handle !== undefined || first.fd !== undefined
    if (!isHandle && first.path === undefined) {
      const options = Object.assign({}, first, { host: HOST })
      delete options.ipv6Only
      args[0] = options
      track(this)
    }
  } else if (!isPipeName(first)) {
    // listen([port][, host][, backlog][, callback]): put HOST in the host position.
    if (first === undefined || typeof first === 'function') args.unshift(0)
    if (typeof args[1] === 'string') args[1] = HOST
    else args.splice(1, 0, HOST)
    track(this)
  }
  return originalListen.apply(this, args)
}

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, function closeConnections() {
    stopping = true
    for (const socket of openSockets) endInput(socket)
    openSockets.clear()
    if (process.listenerCount(signal) === 1) {
      // Nobody else handles this signal: restore Node's default (terminate).
      process.removeListener(signal, closeConnections)
      process.kill(process.pid, signal)
    }
  })
}
