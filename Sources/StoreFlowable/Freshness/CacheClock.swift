/// Where caches and stores read the current wall-clock time: the injectable time source of every
/// freshness decision.
///
/// Use ``SystemCacheClock`` in production and `ManualCacheClock` (in `StoreFlowableTesting`) in tests,
/// so that a test moves time forward by exactly the amount it checks instead of sleeping.
///
/// Reading ``now`` must be cheap, non-blocking and safe from any thread: caches read it on every lookup.
public protocol CacheClock: Sendable {
    /// The current wall-clock time.
    var now: CacheTime { get }
}
