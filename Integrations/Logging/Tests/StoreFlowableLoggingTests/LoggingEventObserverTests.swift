import Foundation
import Logging
import StoreFlowable
import StoreFlowableLogging
import StoreFlowableTesting
import Testing

@Suite("LoggingEventObserver", .timeLimit(.minutes(1)))
struct LoggingEventObserverTests {
    private struct Failure: Error, CustomStringConvertible {
        var description: String { "the failure" }
    }

    @Test func aMissAFreshHitAndAFailingFetchThroughAKeyedStore() async throws {
        let entries = LogEntries()
        // A manual clock that nobody moves: every fetch takes exactly zero.
        let manager = FlowableDataStateManager<Int>(
            fetchPolicy: FetchPolicy(clock: ManualClock()),
            observer: LoggingEventObserver(logger: .capturing(into: entries)))
        let store = KeyedStore(cache: MemoryCache<Int, String>(), manager: manager) { key in
            if key == 2 { throw Failure() }
            return "value \(key)"
        }

        #expect(try await store[1].requireData() == "value 1")
        #expect(try await store[1].requireData() == "value 1")
        await #expect(throws: Failure.self) { try await store[2].requireData() }

        #expect(
            entries.all.map(\.description) == [
                "debug cache miss [data_type=String key=1]",
                "debug fetch started [attempt=1 data_type=String key=1]",
                "debug fetch succeeded [attempt=1 data_type=String duration=0.0 seconds key=1]",
                "debug cache hit [data_type=String freshness=fresh key=1]",
                "debug cache miss [data_type=String key=2]",
                "debug fetch started [attempt=1 data_type=String key=2]",
                "warning fetch failed [attempt=1 data_type=String duration=0.0 seconds error=the failure key=2 will_retry=false]",
            ])
    }

    @Test func everyKindIsWrittenAtItsLevelWithItsMetadata() {
        let entries = LogEntries()
        let observer = LoggingEventObserver(logger: .capturing(into: entries))
        let kinds: [StoreEvent.Kind] = [
            .cacheHit(.staleWhileRevalidate), .cacheMiss(freshness: .staleIfError), .cacheReadFailed(Failure()),
            .joinedFetch, .fetchFailed(attempt: 1, duration: .milliseconds(250), error: Failure(), willRetry: true),
            .retryScheduled(attempt: 2, delay: .milliseconds(100)), .staleServed(.revalidating),
            .staleServed(.originFailed(Failure())), .invalidated,
            .cacheEntryCorrupt(reason: "checksum mismatch"),
        ]
        for kind in kinds { observer.observe(StoreEvent(kind, key: "user-42", dataType: [Int].self)) }
        observer.observe(StoreEvent(.batchDispatched(size: 25), key: nil, dataType: [Int].self))

        let subject = "data_type=Array<Int> key=user-42"
        #expect(
            entries.all.map(\.description) == [
                "debug cache hit [data_type=Array<Int> freshness=staleWhileRevalidate key=user-42]",
                "debug cache miss [data_type=Array<Int> freshness=staleIfError key=user-42]",
                "warning cache read failed [data_type=Array<Int> error=the failure key=user-42]",
                "debug joined fetch [\(subject)]",
                "warning fetch failed [attempt=1 data_type=Array<Int> duration=0.25 seconds error=the failure key=user-42 will_retry=true]",
                "info retry scheduled [attempt=2 data_type=Array<Int> delay=0.1 seconds key=user-42]",
                "info stale value served [\(subject) reason=revalidating]",
                "info stale value served [data_type=Array<Int> error=the failure key=user-42 reason=origin_failed]",
                "info invalidated [\(subject)]",
                "warning cache entry corrupt [\(subject) reason=checksum mismatch]",
                "info batch dispatched [batch_size=25 data_type=Array<Int>]",
            ])
    }

    /// A key that counts how often it is written out.
    private struct CountingKey: Hashable, Sendable, CustomStringConvertible {
        let writes: LogEntries

        var description: String {
            writes.append(LogEntry(level: .trace, message: "written", metadata: [:]))
            return "counted"
        }

        static func == (lhs: Self, rhs: Self) -> Bool { true }
        func hash(into hasher: inout Hasher) {}
    }

    @Test func entriesBelowTheLoggersLevelAreNeitherWrittenNorBuilt() {
        let entries = LogEntries()
        let writes = LogEntries()
        let observer = LoggingEventObserver(logger: .capturing(into: entries, level: .info))
        observer.observe(StoreEvent(.cacheHit(.fresh), key: CountingKey(writes: writes), dataType: String.self))
        #expect(entries.all.isEmpty)
        #expect(writes.all.isEmpty)
        observer.observe(StoreEvent(.invalidated, key: CountingKey(writes: writes), dataType: String.self))
        #expect(entries.all.map(\.description) == ["info invalidated [data_type=String key=counted]"])
        #expect(writes.all.count == 1)
    }

    @Test func aCancelledFetchIsADebugEntryNotAFailure() {
        let entries = LogEntries()
        let observer = LoggingEventObserver(logger: .capturing(into: entries))
        for error in [CancellationError() as any Error, StoreFlowableError.originCancelled] {
            observer.observe(
                StoreEvent(
                    .fetchFailed(attempt: 1, duration: .zero, error: error, willRetry: false), key: 1,
                    dataType: String.self))
        }
        #expect(entries.all.map(\.level) == [.debug, .debug])
        #expect(entries.all.map(\.message) == ["fetch cancelled", "fetch cancelled"])
    }

    @Test func theLevelsAreTheCallersToChoose() {
        let entries = LogEntries()
        let observer = LoggingEventObserver(logger: .capturing(into: entries, level: .info)) { kind in
            if case .cacheHit = kind { return .notice }
            return LoggingEventObserver.defaultLevel(of: kind)
        }
        observer.observe(StoreEvent(.cacheHit(.fresh), key: 1, dataType: String.self))
        observer.observe(StoreEvent(.cacheMiss(freshness: nil), key: 1, dataType: String.self))
        observer.observe(StoreEvent(.invalidated, key: 1, dataType: String.self))
        #expect(
            entries.all.map(\.description) == [
                "notice cache hit [data_type=String freshness=fresh key=1]",
                "info invalidated [data_type=String key=1]",
            ])
    }

    @Test func theDefaultLoggerIsLabelledStoreFlowable() {
        #expect(LoggingEventObserver().logger.label == "StoreFlowable")
    }
}
