import CoreMetrics

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The metric handlers a ``MetricsEventObserver`` has made, by data type and series, so that the factory
/// is asked for each only once.
///
/// A handler is made outside the lock (the factory is the user's code, and takes locks of its own), then
/// stored unless another thread stored one for the same key first; the one stored is the one used from
/// then on. Backends return one metric for one label and set of dimensions, so a handler made twice
/// counts into the same metric either way.
///
/// A pthread mutex rather than `Synchronization.Mutex`: this package supports macOS 13, where `Mutex` is
/// not available.
final class MetricHandles: @unchecked Sendable {
    // Safety: `counters`, `timers` and `recorders` are only read and written between
    // `pthread_mutex_lock` and `pthread_mutex_unlock` of `mutex` (in `withLock`), which the object owns
    // from `init` to `deinit`; nothing else touches them, so every access is serialised.

    /// A data type (its `ObjectIdentifier`) and a series.
    struct Key: Hashable, Sendable {
        let dataType: ObjectIdentifier
        let series: MetricSeries
    }

    private var counters: [Key: any CounterHandler] = [:]
    private var timers: [Key: any TimerHandler] = [:]
    private var recorders: [Key: any RecorderHandler] = [:]
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// The counter of `key`, made with `make` the first time.
    func counter(for key: Key, make: () -> any CounterHandler) -> any CounterHandler {
        if let known = withLock({ counters[key] }) { return known }
        let made = make()
        return withLock {
            if let known = counters[key] { return known }
            counters[key] = made
            return made
        }
    }

    /// The timer of `key`, made with `make` the first time.
    func timer(for key: Key, make: () -> any TimerHandler) -> any TimerHandler {
        if let known = withLock({ timers[key] }) { return known }
        let made = make()
        return withLock {
            if let known = timers[key] { return known }
            timers[key] = made
            return made
        }
    }

    /// The recorder of `key`, made with `make` the first time.
    func recorder(for key: Key, make: () -> any RecorderHandler) -> any RecorderHandler {
        if let known = withLock({ recorders[key] }) { return known }
        let made = make()
        return withLock {
            if let known = recorders[key] { return known }
            recorders[key] = made
            return made
        }
    }

    private func withLock<Result>(_ body: () -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}
