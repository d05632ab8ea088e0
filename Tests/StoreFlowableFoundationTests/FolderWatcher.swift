import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Waits for a file to be created in a folder, without sleeping: `inotify` on Linux, a listing loop
/// elsewhere. The crash test uses it to kill a writer the moment its temporary file appears, on a thread
/// of its own (``CrashWriterProcess/kill(onceNewFileIn:prefix:ignoring:timeout:)``).
final class FolderWatcher: Sendable {
    private let folder: URL
    #if os(Linux)
        private let descriptor: Int32
    #endif

    /// Starts watching `folder` (which must exist) for new files.
    init(_ folder: URL) {
        self.folder = folder
        #if os(Linux)
            descriptor = inotify_init1(Int32(IN_CLOEXEC))
            if descriptor >= 0 {
                _ = inotify_add_watch(descriptor, folder.path(percentEncoded: false), UInt32(IN_CREATE))
            }
        #endif
    }

    deinit {
        #if os(Linux)
            if descriptor >= 0 { close(descriptor) }
        #endif
    }

    /// Returns once a file whose name starts with `prefix` was created since the watch began (and is
    /// not in `ignoring`), or `false` after `timeout`.
    ///
    /// It blocks the calling thread for up to `timeout`: call it on a thread of its own, never from a task
    /// (see ``onThreadOfItsOwn(_:)``).
    func waitForNewFile(prefix: String, ignoring: Set<String>, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        #if os(Linux)
            guard descriptor >= 0 else { return false }
            var buffer = [UInt8](repeating: 0, count: 8192)
            while ContinuousClock.now < deadline {
                var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&request, 1, 100) > 0 else { continue }
                let count = read(descriptor, &buffer, buffer.count)
                guard count > 0 else { continue }
                var offset = 0
                // Each event: wd, mask, cookie and len (4 bytes each), then `len` bytes of name.
                while offset + 16 <= count {
                    let length = buffer.withUnsafeBytes {
                        Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    }
                    let nameBytes = buffer[(offset + 16)..<min(offset + 16 + length, count)].prefix { $0 != 0 }
                    let name = String(decoding: nameBytes, as: UTF8.self)
                    if name.hasPrefix(prefix), !ignoring.contains(name) { return true }
                    offset += 16 + length
                }
            }
            return false
        #else
            while ContinuousClock.now < deadline {
                let names =
                    (try? FileManager.default.contentsOfDirectory(atPath: folder.path(percentEncoded: false))) ?? []
                if names.contains(where: { $0.hasPrefix(prefix) && !ignoring.contains($0) }) { return true }
            }
            return false
        #endif
    }
}
