import StoreFlowable

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
#elseif canImport(Bionic)
    import Bionic
#endif

/// What reading an open entry file gave.
enum EntryFileRead {
    /// A system call failed with this `errno`.
    case failed(code: Int32)
    /// The file is damaged; `identity` is the file read.
    case damaged(DiskCacheFileProblem, identity: FileIdentity)
    /// The file is intact: its bytes and the location of its parts.
    case intact([UInt8], DiskCacheRecord, identity: FileIdentity)
}

extension DiskCache {
    /// The prefix of temporary files: hidden, and never an entry file's name.
    static var temporaryPrefix: String { ".tmp-" }

    /// The suffix of entry files.
    static var entrySuffix: String { ".entry" }

    /// How old a temporary file must be to count as left by a crashed writer: a live write finishes
    /// long before.
    static var leftoverAge: Duration { .seconds(600) }

    /// The key's bytes, from the coder.
    func encodedKey(_ key: Key) throws(DiskCacheError) -> Data {
        do {
            return try coder.encodeKey(key)
        } catch {
            throw .encodingFailed(error)
        }
    }

    /// The name of the entry file of the key encoded as `keyBytes`: its hash in 16 hex digits and
    /// ``entrySuffix``.
    func fileName(forKeyBytes keyBytes: Data) -> String {
        Self.hex(keyHash(keyBytes)) + Self.entrySuffix
    }

    /// `value` in 16 lowercase hex digits.
    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Whether `name` is an entry file's name.
    static func isEntryFileName(_ name: String) -> Bool {
        name.utf8.count == 16 + entrySuffix.utf8.count && name.hasSuffix(entrySuffix)
            && name.utf8.prefix(16).allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The path of file `name` in the folder.
    func path(of name: String) -> String {
        folderPath + "/" + name
    }

    /// Closes a descriptor opened for reading; a failure to close it loses nothing.
    func closeDescriptor(_ descriptor: Int32) {
        _ = close(descriptor)
    }

    /// Reads and checks a whole entry file.
    func readEntryFile(_ descriptor: Int32) -> EntryFileRead {
        do throws(SystemCallError) {
            let (identity, size) = try FileIO.status(of: descriptor)
            let bytes = try FileIO.read(descriptor, size: size)
            switch DiskCacheFileFormat.parse(bytes) {
            case .intact(let record): return .intact(bytes, record, identity: identity)
            case .damaged(let problem): return .damaged(problem, identity: identity)
            }
        } catch {
            return .failed(code: error.code)
        }
    }

    /// Deletes file `name` if it is still the file identified (not replaced since it was read), during
    /// its turn, then reports `event`.
    func discard(_ name: String, identity: FileIdentity, reporting event: DiskCacheEvent) async {
        let events = await turns.withTurn(name) {
            removeDuringTurn(name, ifStill: identity, reporting: event)
        }
        report(events)
    }

    /// During the turn of `name`: deletes the file if it is still the file identified, and returns
    /// `event` (with a failure to delete, if any) to report after the turn.
    ///
    /// The caller keeps the file it read open, so no other file can have its identity meanwhile.
    func removeDuringTurn(
        _ name: String, ifStill identity: FileIdentity, reporting event: DiskCacheEvent
    ) -> [DiskCacheEvent] {
        let path = path(of: name)
        // Replaced since it was read: the new file is another entry, kept.
        guard FileIO.identity(at: path) == identity else { return [event] }
        do throws(SystemCallError) {
            try FileIO.remove(path)
        } catch {
            return error.isMissing ? [event] : [event, .removeFailed(path: path, code: error.code)]
        }
        if sizeLimit != nil { state.withLock { $0.index.remove(name) } }
        return [event]
    }

    /// Passes `events` to the handler, in order. Called with no lock or turn held.
    func report(_ events: [DiskCacheEvent]) {
        guard let handler = self.events else { return }
        for event in events { handler(event) }
    }

    /// The folder's files, or none when the folder does not exist.
    ///
    /// - Throws: ``DiskCacheError/ioFailed(operation:path:code:)`` when the folder cannot be listed.
    func scanFolder() throws(DiskCacheError) -> [ScannedFile] {
        do throws(SystemCallError) {
            return try FileIO.scan(folderPath)
        } catch {
            if error.isMissing { return [] }
            throw .ioFailed(operation: "list", path: folderPath, code: error.code)
        }
    }

    /// The folder's entry files, or none when the folder does not exist.
    func listEntryFiles() throws(DiskCacheError) -> [ScannedFile] {
        try scanFolder().filter { Self.isEntryFileName($0.name) }
    }
}
