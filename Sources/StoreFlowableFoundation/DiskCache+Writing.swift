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

extension DiskCache {
    /// Writes `bytes` as file `name`: to a new temporary file in the folder, flushed with
    /// ``DiskCacheDurability/durable``, then renamed over the file. Creates the folder if missing.
    ///
    /// Called during the turn of `name`. On failure the temporary file is removed and the old file is
    /// unchanged.
    ///
    /// - Parameters:
    ///   - bytes: The whole file.
    ///   - name: The entry file's name.
    ///   - expected: When set, the rename happens only if the entry file is still this one.
    /// - Returns: `false` when `expected` was set and the file was replaced meanwhile (nothing written).
    /// - Throws: A ``DiskCacheError`` for the system call that failed.
    func writeAtomically(
        _ bytes: [UInt8], to name: String, replacingOnly expected: FileIdentity? = nil
    ) throws(DiskCacheError) -> Bool {
        let path = path(of: name)
        let temporaryPath = self.path(of: Self.temporaryPrefix + Self.hex(UInt64.random(in: .min ... .max)))
        let descriptor = try createTemporaryFile(temporaryPath)
        var renamed = false
        defer {
            // A failed write leaves no temporary file; a missing one is already gone.
            if !renamed { _ = try? FileIO.remove(temporaryPath) }
        }
        var operation = "write"
        do throws(SystemCallError) {
            try FileIO.write(descriptor, bytes)
            operation = "fsync"
            if durability == .durable { try FileIO.synchronize(descriptor) }
        } catch {
            closeDescriptor(descriptor)
            throw .writing(operation, path: temporaryPath, code: error.code)
        }
        do throws(SystemCallError) {
            try FileIO.closeAfterWriting(descriptor)
        } catch {
            throw .writing("close", path: temporaryPath, code: error.code)
        }
        if let expected, FileIO.identity(at: path) != expected { return false }
        do throws(SystemCallError) {
            try FileIO.rename(temporaryPath, to: path)
        } catch {
            throw .writing("rename", path: path, code: error.code)
        }
        renamed = true
        if durability == .durable { try synchronizeFolder() }
        return true
    }

    /// Creates a new temporary file, creating the folder first if it is missing.
    private func createTemporaryFile(_ temporaryPath: String) throws(DiskCacheError) -> Int32 {
        do throws(SystemCallError) {
            return try FileIO.createExclusively(temporaryPath)
        } catch {
            switch error.code {
            case ENOENT:
                // The folder does not exist yet, or was removed from outside: created below.
                break
            case ENOTDIR:
                throw .directoryUnavailable(path: folderPath, code: error.code)
            default:
                throw .writing("open", path: temporaryPath, code: error.code)
            }
        }
        do throws(SystemCallError) {
            try FileIO.createFolder(folderPath)
        } catch {
            throw .directoryUnavailable(path: folderPath, code: error.code)
        }
        do throws(SystemCallError) {
            return try FileIO.createExclusively(temporaryPath)
        } catch {
            throw .writing("open", path: temporaryPath, code: error.code)
        }
    }

    /// Flushes the folder's names to the device.
    private func synchronizeFolder() throws(DiskCacheError) {
        do throws(SystemCallError) {
            try FileIO.synchronizeFolder(folderPath)
        } catch {
            throw .ioFailed(operation: "fsync", path: folderPath, code: error.code)
        }
    }

    /// Deletes entry file `name`, if it exists, during its turn.
    ///
    /// - Parameters:
    ///   - name: The entry file's name.
    ///   - synchronizing: Whether to flush the folder afterwards with ``DiskCacheDurability/durable``.
    func removeFile(_ name: String, synchronizing: Bool = true) async throws(DiskCacheError) {
        let path = path(of: name)
        try await turns.withTurn(name) { () throws(DiskCacheError) in
            if sizeLimit != nil { state.withLock { $0.index.remove(name) } }
            do throws(SystemCallError) {
                try FileIO.remove(path)
            } catch {
                if error.isMissing { return }
                throw .writing("unlink", path: path, code: error.code)
            }
            if synchronizing, durability == .durable { try synchronizeFolder() }
        }
    }

    /// During the turn of `name`: rewrites the entry file with the invalidated flag set, if it holds the
    /// key encoded as `keyBytes`. A damaged, expired or other key's file is deleted instead.
    ///
    /// - Returns: The events to report after the turn.
    func markInvalidated(_ name: String, keyBytes: some Collection<UInt8>) throws(DiskCacheError) -> [DiskCacheEvent] {
        let path = path(of: name)
        let descriptor: Int32
        do throws(SystemCallError) {
            descriptor = try FileIO.openForReading(path)
        } catch {
            if error.isMissing { return [] }
            throw .ioFailed(operation: "open", path: path, code: error.code)
        }
        defer { closeDescriptor(descriptor) }
        switch readEntryFile(descriptor) {
        case .failed(let code):
            throw .ioFailed(operation: "read", path: path, code: code)
        case .damaged(let problem, let identity):
            return removeDuringTurn(
                name, ifStill: identity, reporting: .removedDamagedFile(path: path, problem: problem))
        case .intact(let bytes, let record, let identity):
            guard bytes[record.keyRange].elementsEqual(keyBytes) else {
                let event = DiskCacheEvent.removedDamagedFile(path: path, problem: .keyMismatch)
                return removeDuringTurn(name, ifStill: identity, reporting: event)
            }
            if policy.isPastLifetime(storedAt: record.storedAt, now: clock.now) {
                return removeDuringTurn(name, ifStill: identity, reporting: .removedExpiredEntry(path: path))
            }
            if record.isInvalidated { return [] }
            // If another process replaced the file since it was read, its write comes after this
            // invalidation: nothing is written.
            _ = try writeAtomically(DiskCacheFileFormat.markingInvalidated(bytes), to: name, replacingOnly: identity)
            return []
        }
    }

    /// Reads entry file `name` (with no turn), and if its key satisfies `isIncluded`, marks it
    /// invalidated during its turn. Damaged and expired files are deleted.
    func invalidateFile(_ name: String, where isIncluded: @Sendable (Key) -> Bool) async throws(DiskCacheError) {
        let path = path(of: name)
        let descriptor: Int32
        do throws(SystemCallError) {
            descriptor = try FileIO.openForReading(path)
        } catch {
            if !error.isMissing { report([.readFailed(path: path, code: error.code)]) }
            return
        }
        defer { closeDescriptor(descriptor) }
        switch readEntryFile(descriptor) {
        case .failed(let code):
            report([.readFailed(path: path, code: code)])
        case .damaged(let problem, let identity):
            await discard(name, identity: identity, reporting: .removedDamagedFile(path: path, problem: problem))
        case .intact(let bytes, let record, let identity):
            if policy.isPastLifetime(storedAt: record.storedAt, now: clock.now) {
                await discard(name, identity: identity, reporting: .removedExpiredEntry(path: path))
                return
            }
            if record.isInvalidated { return }
            let keyBytes = Data(bytes[record.keyRange])
            // A file under another key's name is never found by its own key's reads.
            guard fileName(forKeyBytes: keyBytes) == name else {
                await discard(
                    name, identity: identity, reporting: .removedDamagedFile(path: path, problem: .keyMismatch))
                return
            }
            let key: Key
            do {
                key = try coder.decodeKey(from: keyBytes)
            } catch {
                let problem = DiskCacheFileProblem.undecodableKey(reason: "\(error)")
                await discard(name, identity: identity, reporting: .removedDamagedFile(path: path, problem: problem))
                return
            }
            guard isIncluded(key) else { return }
            let events = try await turns.withTurn(name) { () throws(DiskCacheError) in
                try markInvalidated(name, keyBytes: keyBytes)
            }
            report(events)
        }
    }
}
