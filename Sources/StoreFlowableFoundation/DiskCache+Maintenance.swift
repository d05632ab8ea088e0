import StoreFlowable

extension DiskCache {
    /// On this instance's first write: removes temporary files left by crashed writers and, with a size
    /// limit, builds the index from the folder's listing. Concurrent first writes do not wait for it.
    func openIfNeeded() {
        let scanStart = state.withLock { state -> UInt64? in
            guard !state.isOpen, !state.isSweeping else { return nil }
            state.isSweeping = true
            return state.index.beginScan()
        }
        guard let scanStart else { return }
        // An unreadable folder is found again by the write that follows.
        let files = try? scanFolder()
        let events = removeLeftovers(files ?? [])
        state.withLock { state in
            if sizeLimit != nil, let files {
                state.index.finishScan(files.filter { Self.isEntryFileName($0.name) }, scanStart: scanStart)
            } else {
                state.index.abandonScan()
            }
            state.isSweeping = false
            state.isOpen = true
        }
        report(events)
    }

    /// When the entry files exceed the size limit: lists the folder again (so that other processes'
    /// files count), then removes the least recently used files until they fill at most 90% of the
    /// limit, never `keeping` (the entry just written).
    func evictIfOverLimit(keeping: String) async {
        guard let sizeLimit else { return }
        let scanStart = state.withLock { state -> UInt64? in
            guard state.index.totalSize > sizeLimit, !state.isSweeping else { return nil }
            state.isSweeping = true
            return state.index.beginScan()
        }
        guard let scanStart else { return }
        let files = try? scanFolder()
        var events = removeLeftovers(files ?? [])
        let victims = state.withLock { state in
            if let files {
                state.index.finishScan(files.filter { Self.isEntryFileName($0.name) }, scanStart: scanStart)
            } else {
                state.index.abandonScan()
            }
            guard state.index.totalSize > sizeLimit else { return [(name: String, size: Int)]() }
            return state.index.evict(downTo: sizeLimit - sizeLimit / 10, keeping: keeping)
        }
        for victim in victims {
            let path = path(of: victim.name)
            let event = await turns.withTurn(victim.name) { () -> DiskCacheEvent? in
                // Read or rewritten since it was chosen: it is in use again, and kept.
                guard state.withLock({ $0.index.items[victim.name] == nil }) else { return nil }
                do throws(SystemCallError) {
                    try FileIO.remove(path)
                } catch {
                    return error.isMissing ? nil : .removeFailed(path: path, code: error.code)
                }
                return .evicted(path: path, bytes: victim.size)
            }
            if let event { events.append(event) }
        }
        state.withLock { $0.isSweeping = false }
        report(events)
    }

    /// Removes the temporary files among `files` older than ``leftoverAge`` (by the system's wall clock,
    /// which stamps file times): their writers crashed or were killed.
    ///
    /// - Returns: The events to report.
    func removeLeftovers(_ files: [ScannedFile]) -> [DiskCacheEvent] {
        let cutoff = SystemCacheClock().now.advanced(by: .zero - Self.leftoverAge).nanosecondsSince1970
        var events: [DiskCacheEvent] = []
        for file in files where file.name.hasPrefix(Self.temporaryPrefix) && file.modified < cutoff {
            let path = path(of: file.name)
            do throws(SystemCallError) {
                try FileIO.remove(path)
                events.append(.removedTemporaryFile(path: path))
            } catch {
                if !error.isMissing { events.append(.removeFailed(path: path, code: error.code)) }
            }
        }
        return events
    }
}
