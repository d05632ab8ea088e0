// A process of its own for the SQLite cache's crash tests: writes entries to a cache until it is
// killed, printing each completed write's number, so that the test can kill it in the middle of one.
//
//   sqlite-cache-writer PATH NAME KEYS PAYLOAD_BYTES
//
// Entry n goes to key n % KEYS; its value is `CrashRecord(number: n, payload:)` whose payload is
// PAYLOAD_BYTES copies of the byte n % 251, so a reader can tell a whole value from a mixed one.

import StoreFlowable
import StoreFlowableSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The value the writer stores: a number and a payload derived from it.
struct CrashRecord: Codable, Sendable {
    var number: Int
    var payload: [UInt8]
}

/// Writes `line` to standard output at once (unbuffered: the test reads each line as it is written).
func say(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { bytes in _ = write(1, bytes.baseAddress, bytes.count) }
}

let arguments = CommandLine.arguments
guard arguments.count == 5, let keys = Int(arguments[3]), let payloadBytes = Int(arguments[4]), keys > 0 else {
    say("usage: sqlite-cache-writer PATH NAME KEYS PAYLOAD_BYTES")
    exit(2)
}
do {
    let cache = try await SQLiteCache<Int, CrashRecord>.open(name: arguments[2], path: arguments[1])
    say("ready")
    var number = 0
    while true {
        let record = CrashRecord(number: number, payload: [UInt8](repeating: UInt8(number % 251), count: payloadBytes))
        try await cache.setEntry(CacheEntry(value: record, storedAt: cache.clock.now), forKey: number % keys)
        say("wrote \(number)")
        number += 1
    }
} catch {
    say("failed: \(error)")
    exit(1)
}
