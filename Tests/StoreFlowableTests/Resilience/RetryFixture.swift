import StoreFlowableTesting

@testable import StoreFlowable

/// An origin error whose retry advice a test chooses.
struct AdvisedError: RetryableError, CustomStringConvertible {
    let retryAdvice: RetryAdvice
    var description: String { "advised(\(retryAdvice))" }

    static let transient = AdvisedError(retryAdvice: .retry)
    static let permanent = AdvisedError(retryAdvice: .doNotRetry)
}

/// An error the core cannot classify.
struct UnclassifiedError: Error {}

/// A store of one key over a scripted origin, with a retry policy on a manual clock and an event
/// recorder.
struct RetryFixture: Sendable {
    let clock = ManualClock()
    let events = StoreEventRecorder()
    let origin: ScriptedOrigin<String>
    let manager: FlowableDataStateManager<Int>
    let cache = InMemoryCache<String>()

    init(
        _ results: [Result<String, any Error>], policy: RetryPolicy,
        otherwise: (@Sendable (Int) -> Result<String, any Error>)? = nil
    ) {
        origin = ScriptedOrigin(results, otherwise: otherwise)
        manager = FlowableDataStateManager(fetchPolicy: FetchPolicy(retry: policy, clock: clock), observer: events)
    }

    var callback: TestStoreCallback<Int, String> {
        TestStoreCallback(key: 1, manager: manager, cache: cache, origin: origin)
    }

    var store: AnyStoreFlowable<String> { callback.create() }

    /// The events so far in a compact form: durations in milliseconds, errors left out.
    var summary: [String] { events.events.map { Self.summary(of: $0.kind) } }

    static func summary(of kind: StoreEvent.Kind) -> String {
        switch kind {
        case .cacheHit(let freshness): "hit \(freshness)"
        case .cacheMiss(let freshness): "miss" + (freshness.map { " \($0)" } ?? "")
        case .cacheReadFailed: "read failed"
        case .cacheEntryCorrupt: "corrupt"
        case .joinedFetch: "joined"
        case .fetchStarted(let attempt): "started \(attempt)"
        case .fetchSucceeded(let attempt, let duration): "succeeded \(attempt) \(milliseconds(duration))ms"
        case .fetchFailed(let attempt, let duration, _, let willRetry):
            "failed \(attempt) \(milliseconds(duration))ms" + (willRetry ? " retrying" : "")
        case .retryScheduled(let attempt, let delay): "retry \(attempt) in \(milliseconds(delay))ms"
        case .staleServed(let reason):
            switch reason {
            case .revalidating: "stale served revalidating"
            case .originFailed: "stale served on error"
            }
        case .batchDispatched(let size): "batch \(size)"
        case .invalidated: "invalidated"
        case .reloaded: "reloaded"
        case .staleMarkFailed: "stale mark failed"
        }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }

    /// Waits until nothing runs for the key any more (the fetch reported back), yielding meanwhile.
    func waitUntilIdle() async {
        while await !manager.isIdle(1, String.self) { await Task.yield() }
    }
}
