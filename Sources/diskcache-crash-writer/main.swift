// The child process of DiskCache's crash and failure tests (Tests/StoreFlowableFoundationTests): it
// runs DiskCache operations on a folder the test gives it and prints what happened, one line at a time,
// so that the test can kill it in the middle of a write or check a failure that needs a process of its
// own (a file-size limit, another user id). Not a product; the tests find its binary next to theirs.
//
// Usage:
//     DiskCacheCrashWriter write-loop <directory> <name> <keys> <payload bytes> <first generation> <durability>
//         Writes every key once with the first generation, prints "ready", then rewrites the keys in
//         turn with the next generations for ever, with DiskCacheDurability <durability> ("atomic" or
//         "durable"). Prints "start <key> <generation>" before each write and "wrote <key> <generation>"
//         after it.
//     DiskCacheCrashWriter disk-full <directory> <name>
//         Writes a small value, limits the size of files it may write (RLIMIT_FSIZE) to 64 KiB, then
//         writes a 1 MiB value to the same key. Prints "error: <case>", "read: <value>" and
//         "temporaryFiles: <count>".
//     DiskCacheCrashWriter read-only <directory> <name> <user id>
//         As root, switches its effective user id to <user id> first. Writes key "k", then reads it.
//         Prints "error: <case>" (or "error: none") and "read: <value>".

import StoreFlowable
import StoreFlowableFoundation

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value whose contents tell whether it is complete: `payload` is `generation`'s letter repeated.
struct Blob: Codable, Sendable {
    var key: Int
    var generation: Int
    var payload: String

    /// The value of `key` for `generation`, `bytes` letters long.
    init(key: Int, generation: Int, bytes: Int) {
        self.key = key
        self.generation = generation
        payload = String(decoding: [UInt8](repeating: UInt8(97 + generation % 26), count: bytes), as: UTF8.self)
    }
}

/// `RLIMIT_FSIZE`, as `setrlimit` takes it on this platform.
#if canImport(Glibc)
    let fileSizeResource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
#else
    let fileSizeResource = RLIMIT_FSIZE
#endif

/// Prints one line at once, so that the test sees it before the process is killed.
func say(_ line: String) {
    print(line)
    fflush(nil)  // every stream: stdout is a pipe, fully buffered otherwise
}

/// Prints `message` and exits with status 2.
func fail(_ message: String) -> Never {
    say("fatal: \(message)")
    exit(2)
}

/// The name of a `DiskCacheError` case.
func caseName(_ error: any Error) -> String {
    guard let error = error as? DiskCacheError else { return "other(\(error))" }
    switch error {
    case .invalidName: return "invalidName"
    case .directoryUnavailable: return "directoryUnavailable"
    case .diskFull: return "diskFull"
    case .notWritable: return "notWritable"
    case .ioFailed: return "ioFailed"
    case .encodingFailed: return "encodingFailed"
    case .entryTooLarge: return "entryTooLarge"
    }
}

/// The number of temporary files in `folder`.
func temporaryFileCount(in folder: URL) -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path(percentEncoded: false))) ?? []
    return names.filter { $0.hasPrefix(".tmp-") }.count
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else { fail("usage: DiskCacheCrashWriter <mode> <directory> <name> ...") }
let (mode, directory, name) = (arguments[1], URL(filePath: arguments[2], directoryHint: .isDirectory), arguments[3])

switch mode {
case "write-loop":
    guard arguments.count == 8, let keys = Int(arguments[4]), let bytes = Int(arguments[5]),
        let first = Int(arguments[6]), ["atomic", "durable"].contains(arguments[7])
    else { fail("usage: write-loop <directory> <name> <keys> <payload bytes> <first generation> <durability>") }
    do {
        let durability: DiskCacheDurability = arguments[7] == "durable" ? .durable : .atomic
        let cache = try DiskCache<Int, Blob>(name: name, directory: directory, durability: durability)
        var generation = first
        for key in 0..<keys {
            say("start \(key) \(generation)")
            try await cache.setEntry(
                CacheEntry(
                    value: Blob(key: key, generation: generation, bytes: bytes),
                    storedAt: cache.clock.now), forKey: key)
            say("wrote \(key) \(generation)")
        }
        say("ready")
        while true {
            generation += 1
            for key in 0..<keys {
                say("start \(key) \(generation)")
                try await cache.setEntry(
                    CacheEntry(
                        value: Blob(key: key, generation: generation, bytes: bytes),
                        storedAt: cache.clock.now), forKey: key)
                say("wrote \(key) \(generation)")
            }
        }
    } catch {
        fail("\(error)")
    }

case "disk-full":
    // Past the limit, write(2) fails with EFBIG instead of the process being killed by SIGXFSZ.
    signal(SIGXFSZ, SIG_IGN)
    do {
        let cache = try DiskCache<String, String>(name: name, directory: directory)
        try await cache.setEntry(CacheEntry(value: "small", storedAt: cache.clock.now), forKey: "k")
        var limit = rlimit(rlim_cur: 64 * 1024, rlim_max: 64 * 1024)
        guard setrlimit(fileSizeResource, &limit) == 0 else { fail("setrlimit: errno \(errno)") }
        do {
            let large = String(repeating: "x", count: 1024 * 1024)
            try await cache.setEntry(CacheEntry(value: large, storedAt: cache.clock.now), forKey: "k")
            say("error: none")
        } catch {
            say("error: \(caseName(error))")
            say("description: \(error)")
        }
        say("read: \(try await cache.entry(forKey: "k")?.value ?? "nil")")
        say("temporaryFiles: \(temporaryFileCount(in: cache.folder))")
    } catch {
        fail("\(error)")
    }

case "read-only":
    guard arguments.count == 5, let userID = UInt32(arguments[4]) else {
        fail("usage: read-only <directory> <name> <user id>")
    }
    if geteuid() == 0, seteuid(uid_t(userID)) != 0 { fail("seteuid: errno \(errno)") }
    do {
        let cache = try DiskCache<String, String>(name: name, directory: directory)
        do {
            try await cache.setEntry(CacheEntry(value: "new", storedAt: cache.clock.now), forKey: "k")
            say("error: none")
        } catch {
            say("error: \(caseName(error))")
            say("description: \(error)")
        }
        say("read: \(try await cache.entry(forKey: "k")?.value ?? "nil")")
        say("temporaryFiles: \(temporaryFileCount(in: cache.folder))")
    } catch {
        fail("\(error)")
    }

default:
    fail("unknown mode \(mode)")
}
