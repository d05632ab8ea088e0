// The write paths of a callback store: updates, clearing and invalidation, each under the key's write
// turn (see `KeyStateMachine`'s write queue).
extension CallbackStore {
    @usableFromInline
    func update(newData: Data?) async {
        await update(readingCurrent: false) { _ in newData }
    }

    @usableFromInline
    func update(_ transform: @escaping @Sendable (Data?) throws -> Data?) async throws {
        try await update(reading: .strict, transform)
    }

    /// Writes the value `makeNewData` builds, with every promise of ``update(newData:)``.
    ///
    /// - Parameters:
    ///   - readingCurrent: Whether to read the cache once the write turn is taken and hand the value to
    ///     `makeNewData` (a throwing or empty read hands it `nil`); otherwise it gets `nil`.
    ///   - makeNewData: Builds the value to write from the current one.
    func update(readingCurrent: Bool, _ makeNewData: @escaping @Sendable (Data?) -> Data?) async {
        // Only a strict read or a throwing transform can fail before the write; neither is used here.
        try? await update(reading: readingCurrent ? .lenient : .none, makeNewData)
    }

    /// How an update reads the value it replaces, once it holds the write turn.
    enum UpdateRead {
        /// It does not read: the new value does not depend on the current one.
        case none
        /// A throwing read counts as an empty cache.
        case lenient
        /// A throwing read fails the update before anything is written.
        case strict
    }

    /// Writes the value `makeNewData` builds from the current one, with every promise of
    /// ``update(newData:)``.
    ///
    /// - Throws: With ``UpdateRead/strict``: ``StoreFlowableError/reentrantCall`` when called from
    ///   inside this key's own cache write (nothing is queued then); what `makeNewData` throws and
    ///   ``StoreFlowableError/cacheReadFailed(underlying:)`` (nothing is written then);
    ///   ``StoreFlowableError/cacheWriteFailed(underlying:)``. Otherwise it throws nothing: failures
    ///   reach subscribers as states.
    func update(reading read: UpdateRead, _ makeNewData: @escaping @Sendable (Data?) throws -> Data?) async throws {
        let permit = WaitPermit.forWrite(of: node)
        if permit.isRefused, read == .strict { throw StoreFlowableError.reentrantCall }
        let writer = OneShot<Bool>()
        let (id, mayWriteNow, effects) = await manager.beginUpdate(key, writer, Data.self)
        effects.run(for: self)
        if permit.isRefused {
            // Called from inside this key's own cache write (or closing a cycle of waits): the write turn
            // cannot be granted before the caller returns. The update keeps its place in the queue and is
            // written by a task of its own once the turn comes; the caller does not wait for it.
            let store = self
            Task { _ = await store.write(update: id, mayWriteNow: mayWriteNow, writer: writer, read, makeNewData) }
            return
        }
        defer { permit.end() }
        if let failure = await write(update: id, mayWriteNow: mayWriteNow, writer: writer, read, makeNewData),
            read == .strict
        {
            throw failure
        }
    }

    /// Why an update's write task ended without writing a value.
    fileprivate enum UpdateFailure: Error {
        /// The read of the current value, or the transform, threw: nothing was written.
        case beforeWriting(any Error)
        /// `saveDataToCache(newData:)` threw.
        case writing(any Error)
    }

    /// Waits for the write turn of update `id` unless it may write now, writes, and reports the outcome.
    ///
    /// - Returns: The error the update failed with, or `nil` when it wrote its value.
    fileprivate func write(
        update id: UInt64, mayWriteNow: Bool, writer: OneShot<Bool>, _ read: UpdateRead,
        _ makeNewData: @escaping @Sendable (Data?) throws -> Data?
    ) async -> (any Error)? {
        if !mayWriteNow {
            // Updates are only ever granted, never rejected; the wait ignores cancellation so the write
            // turn is always used and released.
            _ = try? await writer.value(cancellable: false)
        }
        // The write runs in a task of its own so that cancelling the caller cannot fail it: the update
        // already superseded the fetch, and its waiters expect this value.
        let callback = callback
        let node = node
        let expiry = contentExpiry
        // A throwing task returning the value (and when it stops being usable, for a cache with a
        // `maxAge`): one allocation fewer per update than a task returning a `Result`.
        let written: Result<(value: Data?, usableUntil: CacheTime?), UpdateFailure>
        do {
            written = .success(
                try await Task {
                    try await CallbackScope.run(node, .write) {
                        let current: Data?
                        switch read {
                        case .none: current = nil
                        case .lenient: current = (try? await callback.loadDataFromCache()) ?? nil
                        case .strict:
                            do {
                                current = try await callback.loadDataFromCache()
                            } catch {
                                throw UpdateFailure.beforeWriting(StoreFlowableError.cacheReadFailed(underlying: error))
                            }
                        }
                        let newData: Data?
                        do {
                            newData = try makeNewData(current)
                        } catch {
                            throw UpdateFailure.beforeWriting(error)
                        }
                        // Taken just before the write, so never later than the written entry's own expiry.
                        let usableUntil = expiry?.usableUntilOfValueWrittenNow()
                        do {
                            try await callback.saveDataToCache(newData: newData)
                        } catch {
                            throw UpdateFailure.writing(StoreFlowableError.cacheWriteFailed(underlying: error))
                        }
                        return (newData, usableUntil)
                    }
                }.value)
        } catch let failure as UpdateFailure {
            written = .failure(failure)
        } catch {
            // Unreachable: the task throws only `UpdateFailure`; treated as a failed write all the same.
            written = .failure(.writing(StoreFlowableError.cacheWriteFailed(underlying: error)))
        }
        switch written {
        case .success(let (newData, usableUntil)):
            await manager.finishUpdate(key, update: id, newData: newData, error: nil, usableUntil: usableUntil)
                .run(for: self)
            return nil
        case .failure(.beforeWriting(let error)):
            await manager.finishUpdateUnchanged(key, Data.self, update: id).run(for: self)
            return error
        case .failure(.writing(let error)):
            await manager.finishUpdate(key, update: id, newData: nil as Data?, error: error).run(for: self)
            return error
        }
    }

    @usableFromInline
    func invalidate() async throws {
        let permit = WaitPermit.forWrite(of: node)
        // From inside this key's own cache write, the write turn cannot be granted before the caller
        // returns.
        if permit.isRefused { throw StoreFlowableError.reentrantCall }
        defer { permit.end() }
        let writer = OneShot<Bool>()
        let (id, mayWriteNow, effects) = await manager.beginInvalidation(key, writer, Data.self)
        effects.run(for: self)
        if !mayWriteNow {
            // Invalidations are only ever granted; the wait ignores cancellation so the turn is always
            // used and released.
            _ = try? await writer.value(cancellable: false)
        }
        // The mark runs in a task of its own so that cancelling the caller cannot fail it.
        let callback = callback
        let node = node
        let failure: (any Error)? = await Task {
            do {
                try await CallbackScope.run(node, .write) { try await callback.invalidateCache() }
                return nil
            } catch {
                return error
            }
        }.value
        await manager.finishInvalidation(key, Data.self, invalidation: id).run(for: self)
        if let failure { throw StoreFlowableError.cacheWriteFailed(underlying: failure) }
        report(.invalidated)
    }

    @usableFromInline
    func clear() async {
        await update(newData: nil)
    }
}
