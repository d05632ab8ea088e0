import CoreMetrics
import Foundation
import MetricsTestKit
import StoreFlowable
import StoreFlowableMetrics
import StoreFlowableTesting
import Testing

@Suite("MetricsEventObserver", .timeLimit(.minutes(1)))
struct MetricsEventObserverTests {
    private struct Failure: Error {}

    /// Every counter of `metrics` with its total, and every timer and recorder with its values, each named
    /// `label{name=value,…}` with the dimensions in name order.
    private struct Snapshot: Equatable {
        var counters: [String: Int64] = [:]
        var timers: [String: [Int64]] = [:]
        var recorders: [String: [Double]] = [:]

        init(counters: [String: Int64] = [:], timers: [String: [Int64]] = [:], recorders: [String: [Double]] = [:]) {
            self.counters = counters
            self.timers = timers
            self.recorders = recorders
        }

        init(_ metrics: TestMetrics) {
            for counter in metrics.counters {
                counters[Self.name(counter.label, counter.dimensions)] = counter.totalValue
            }
            for timer in metrics.timers { timers[Self.name(timer.label, timer.dimensions)] = timer.values }
            for recorder in metrics.recorders {
                recorders[Self.name(recorder.label, recorder.dimensions)] = recorder.values
            }
        }

        static func name(_ label: String, _ dimensions: [(String, String)]) -> String {
            let sorted = dimensions.sorted { $0.0 < $1.0 }.map { "\($0.0)=\($0.1)" }
            return label + "{" + sorted.joined(separator: ",") + "}"
        }
    }

    /// A factory that counts the handlers it is asked for and makes them with `TestMetrics`.
    private final class CountingFactory: MetricsFactory, Sendable {
        let metrics = TestMetrics()
        private let made = LockedCount()

        var handlersMade: Int { made.value }

        func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
            made.increment()
            return metrics.makeCounter(label: label, dimensions: dimensions)
        }

        func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
            made.increment()
            return metrics.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
        }

        func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
            made.increment()
            return metrics.makeTimer(label: label, dimensions: dimensions)
        }

        func destroyCounter(_ handler: any CounterHandler) { metrics.destroyCounter(handler) }
        func destroyRecorder(_ handler: any RecorderHandler) { metrics.destroyRecorder(handler) }
        func destroyTimer(_ handler: any TimerHandler) { metrics.destroyTimer(handler) }
    }

    @Test func theFactoryIsAskedOncePerSeriesAndDataType() {
        let factory = CountingFactory()
        let observer = MetricsEventObserver(factory: factory)
        let copy = observer  // copies share the handlers
        for _ in 0..<100 {
            observer.observe(StoreEvent(.cacheHit(.fresh), key: 1, dataType: String.self))
            copy.observe(StoreEvent(.cacheHit(.fresh), key: 1, dataType: Int.self))
            observer.observe(StoreEvent(.cacheHit(.stale), key: 2, dataType: String.self))
            observer.observe(StoreEvent(.batchDispatched(size: 3), key: 2, dataType: String.self))
            copy.observe(
                StoreEvent(.fetchSucceeded(attempt: 1, duration: .seconds(1)), key: 3, dataType: String.self))
        }
        // hit_fresh × 2 types, hit_stale, batch_size, fetches{succeeded} and its duration.
        #expect(factory.handlersMade == 6)
        let counters = Snapshot(factory.metrics).counters
        #expect(counters["storeflowable_cache_reads{data_type=String,result=hit_fresh}"] == 100)
        #expect(counters["storeflowable_cache_reads{data_type=Int,result=hit_fresh}"] == 100)
        #expect(counters["storeflowable_cache_reads{data_type=String,result=hit_stale}"] == 100)
        #expect(counters["storeflowable_fetches{data_type=String,outcome=succeeded}"] == 100)
        #expect(Snapshot(factory.metrics).recorders["storeflowable_batch_size{data_type=String}"]?.count == 100)
        #expect(
            Snapshot(factory.metrics).timers["storeflowable_fetch_duration{data_type=String,outcome=succeeded}"]?.count
                == 100)
    }

    @Test func eventsObservedFromManyThreadsAtOnceAreAllCounted() async {
        let factory = CountingFactory()
        let observer = MetricsEventObserver(factory: factory)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<2_000 {
                        let kind: StoreEvent.Kind = index % 2 == 0 ? .cacheHit(.fresh) : .cacheMiss(freshness: nil)
                        if task % 2 == 0 {
                            observer.observe(StoreEvent(kind, key: index, dataType: String.self))
                        } else {
                            observer.observe(StoreEvent(kind, key: index, dataType: [Int].self))
                        }
                    }
                }
            }
        }
        let counters = Snapshot(factory.metrics).counters
        #expect(counters["storeflowable_cache_reads{data_type=String,result=hit_fresh}"] == 4_000)
        #expect(counters["storeflowable_cache_reads{data_type=String,result=miss}"] == 4_000)
        #expect(counters["storeflowable_cache_reads{data_type=Array<Int>,result=hit_fresh}"] == 4_000)
        #expect(counters["storeflowable_cache_reads{data_type=Array<Int>,result=miss}"] == 4_000)
        // Threads racing on a new series may each make a handler; the backend merges them, and the
        // observer keeps one.
        #expect(factory.handlersMade >= 4)
    }

    @Test func aMissAFreshHitAndAFailingFetchThroughAKeyedStore() async throws {
        let metrics = TestMetrics()
        // A manual clock that nobody moves: every fetch takes exactly zero.
        let manager = FlowableDataStateManager<Int>(
            fetchPolicy: FetchPolicy(clock: ManualClock()), observer: MetricsEventObserver(factory: metrics))
        let store = KeyedStore(cache: MemoryCache<Int, String>(), manager: manager) { key in
            if key == 2 { throw Failure() }
            return "value \(key)"
        }

        #expect(try await store[1].requireData() == "value 1")  // a miss, then a fetch
        #expect(try await store[1].requireData() == "value 1")  // a fresh hit
        await #expect(throws: Failure.self) { try await store[2].requireData() }  // a miss, a failing fetch

        #expect(
            Snapshot(metrics)
                == Snapshot(
                    counters: [
                        "storeflowable_cache_reads{data_type=String,result=miss}": 2,
                        "storeflowable_cache_reads{data_type=String,result=hit_fresh}": 1,
                        "storeflowable_fetches{data_type=String,outcome=started}": 2,
                        "storeflowable_fetches{data_type=String,outcome=succeeded}": 1,
                        "storeflowable_fetches{data_type=String,outcome=failed}": 1,
                    ],
                    timers: [
                        "storeflowable_fetch_duration{data_type=String,outcome=succeeded}": [0],
                        "storeflowable_fetch_duration{data_type=String,outcome=failed}": [0],
                    ]))
    }

    @Test func everyKindGoesToItsMetricUnderThePrefixWithoutTheKey() {
        let metrics = TestMetrics()
        let observer = MetricsEventObserver(factory: metrics, labelPrefix: "app")
        let kinds: [StoreEvent.Kind] = [
            .cacheHit(.fresh), .cacheHit(.staleWhileRevalidate), .cacheMiss(freshness: nil),
            .cacheMiss(freshness: .stale), .cacheReadFailed(Failure()), .joinedFetch, .fetchStarted(attempt: 1),
            .fetchFailed(attempt: 1, duration: .milliseconds(250), error: Failure(), willRetry: true),
            .retryScheduled(attempt: 2, delay: .milliseconds(100)), .fetchStarted(attempt: 2),
            .fetchSucceeded(attempt: 2, duration: .seconds(2) + .nanoseconds(7)), .staleServed(.revalidating),
            .staleServed(.originFailed(Failure())), .invalidated, .invalidated,
            .cacheEntryCorrupt(reason: "checksum mismatch"),
        ]
        for kind in kinds { observer.observe(StoreEvent(kind, key: "user-42", dataType: [Int].self)) }
        observer.observe(StoreEvent(.batchDispatched(size: 25), key: nil, dataType: [Int].self))

        let type = "data_type=Array<Int>"
        #expect(
            Snapshot(metrics)
                == Snapshot(
                    counters: [
                        "app_cache_reads{\(type),result=hit_fresh}": 1,
                        "app_cache_reads{\(type),result=hit_stale}": 1,
                        "app_cache_reads{\(type),result=miss}": 2,
                        "app_cache_reads{\(type),result=read_failed}": 1,
                        "app_corrupt_cache_entries{\(type)}": 1,
                        "app_fetches{\(type),outcome=joined}": 1,
                        "app_fetches{\(type),outcome=started}": 2,
                        "app_fetches{\(type),outcome=failed}": 1,
                        "app_fetches{\(type),outcome=succeeded}": 1,
                        "app_retries_scheduled{\(type)}": 1,
                        "app_stale_served{\(type),reason=revalidating}": 1,
                        "app_stale_served{\(type),reason=origin_failed}": 1,
                        "app_invalidations{\(type)}": 2,
                    ],
                    timers: [
                        "app_fetch_duration{\(type),outcome=failed}": [250_000_000],
                        "app_fetch_duration{\(type),outcome=succeeded}": [2_000_000_007],
                    ],
                    recorders: ["app_batch_size{\(type)}": [25]]))
    }

    @Test func anEmptyPrefixLeavesTheNamesBare() {
        let metrics = TestMetrics()
        MetricsEventObserver(factory: metrics, labelPrefix: "").observe(
            StoreEvent(.invalidated, key: 1, dataType: String.self))
        #expect(Snapshot(metrics) == Snapshot(counters: ["invalidations{data_type=String}": 1]))
    }

    @Test func durationsBeyondInt64NanosecondsSaturate() {
        let metrics = TestMetrics()
        let observer = MetricsEventObserver(factory: metrics)
        for seconds in [Int64.max, Int64.min] {
            observer.observe(
                StoreEvent(.fetchSucceeded(attempt: 1, duration: .seconds(seconds)), key: 1, dataType: String.self))
        }
        #expect(
            Snapshot(metrics).timers == [
                "storeflowable_fetch_duration{data_type=String,outcome=succeeded}": [Int64.max, Int64.min]
            ])
    }

    @Test func theGlobalFactoryIsTheDefault() {
        // Not bootstrapped here: the global factory is swift-metrics' no-op one until a program sets it.
        #expect(MetricsEventObserver().factory as AnyObject === MetricsSystem.factory as AnyObject)
        #expect(MetricsEventObserver().labelPrefix == "storeflowable")
    }
}

/// A count behind a lock, for the counting factory.
private final class LockedCount: @unchecked Sendable {
    // Safety: `count` is only read and written while `lock` is held.
    private let lock = NSLock()
    private var count = 0

    var value: Int { lock.withLock { count } }

    func increment() { lock.withLock { count += 1 } }
}
