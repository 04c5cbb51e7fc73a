// Starts kinesalite on 127.0.0.1 (its own CLI has no host option).
//
//   node kinesalite.js [PORT [PERSIST_DIR]]
//
// PORT defaults to $KINESALITE_PORT, then 4567. PERSIST_DIR (or $KINESALITE_PATH) turns on LevelDB
// persistence in that directory; without it the data lives in memory only. Stream state changes take
// 50 ms instead of 500 ms, and the shard limit is high enough for any test.
'use strict'

const kinesalite = require('kinesalite')

const port = Number(process.argv[2] || process.env.KINESALITE_PORT || 4567)
const persistDir = process.argv[3] || process.env.KINESALITE_PATH || undefined
const host = '127.0.0.1'

if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`kinesalite.js: invalid port ${process.argv[2] || process.env.KINESALITE_PORT}`)
  process.exit(2)
}

const server = kinesalite({
  path: persistDir,
  createStreamMs: 50,
  deleteStreamMs: 50,
  updateStreamMs: 50,
  shardLimit: 2000,
})

// kinesalite rethrows a request's 'error' event (index.js: `req.on('error', function(err) { throw err })`), so a
// client that dies in the middle of sending a request (a SIGKILLed Spark driver, say) would take the whole server
// down with it and fail every later test. Such an error concerns only that one request: log it and go on. Any
// other uncaught error still ends the process, with its stack in the log.
process.on('uncaughtException', (err) => {
  if (err && (err.code === 'ECONNRESET' || err.code === 'EPIPE' || err.message === 'aborted')) {
    console.error(`kinesalite.js: a client went away mid-request (${err.code || err.message}); carrying on`)
    return
  }
  console.error(`kinesalite.js: ${(err && err.stack) || err}`)
  process.exit(1)
})

server.on('error', (err) => {
  console.error(`kinesalite.js: ${err.stack || err}`)
  process.exit(1)
})

server.listen(port, host, () => {
  const address = server.address()
  console.log(`kinesalite listening at http://${address.address}:${address.port}` +
    (persistDir ? ` (data in ${persistDir})` : ' (in memory)'))
})

// Close the store cleanly (LevelDB flushes on close) when asked to stop.
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    const timer = setTimeout(() => process.exit(0), 2000)
    timer.unref()
    server.close(() => process.exit(0))
    // Idle keep-alive connections of clients that are still running must not delay the exit.
    server.closeAllConnections()
  })
}
