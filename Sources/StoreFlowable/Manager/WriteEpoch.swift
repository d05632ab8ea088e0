#if canImport(Synchronization)
    import Synchronization
#endif

/// A counter of a state manager's completed writes that replaced a key's data, readable from any thread
/// without entering the manager.
///
/// A store reads it before it reads the cache. When that read finds nothing valid, the store hands the
/// number to the manager with its request to fetch: if a write replaced the key's data after the number
/// was read, the read may have missed it, so the store reads again instead of starting a second fetch.
/// Only the manager's actor advances the counter, after the cache write completed.
///
/// Reading it is one atomic load (with a lock on Apple systems older than macOS 15 / iOS 18, where the
/// standard library has no atomics).
@usableFromInline
final class WriteEpoch: Sendable {
    private let storage: any EpochStorage

    /// Creates a counter at zero.
    init() {
        #if canImport(Synchronization)
            if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
                storage = AtomicEpochStorage()
                return
            }
        #endif
        storage = LockedEpochStorage()
    }

    /// The current value; ordered after every write that advanced the counter before it.
    @usableFromInline
    var current: UInt64 { storage.load() }

    /// Advances the counter; called by the manager's actor once a cache write completed.
    ///
    /// - Returns: The new value.
    func advance() -> UInt64 { storage.advance() }
}

/// How a ``WriteEpoch`` stores its value.
private protocol EpochStorage: Sendable {
    func load() -> UInt64
    func advance() -> UInt64
}

#if canImport(Synchronization)
    /// An atomic counter: loads acquire what the advance released.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private final class AtomicEpochStorage: EpochStorage {
        private let value = Atomic<UInt64>(0)

        func load() -> UInt64 { value.load(ordering: .acquiring) }

        func advance() -> UInt64 { value.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue }
    }
#endif

/// A counter behind the library's lock, for systems without the standard library's atomics.
private final class LockedEpochStorage: EpochStorage {
    private let value = LockedValue<UInt64>(0)

    func load() -> UInt64 { value.withLock { $0 } }

    func advance() -> UInt64 {
        value.withLock { value in
            value &+= 1
            return value
        }
    }
}
