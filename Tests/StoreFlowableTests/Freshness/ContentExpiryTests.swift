import StoreFlowable
import StoreFlowableTesting
import Testing

private let down = TestError("down")

/// Promise 14: a value past `maxAge` is never a stream's content, also when the stream already showed
/// it before it expired. Each test ends with the value's age on each side of `maxAge` (60 s), so a
/// check made at the wrong moment fails one of the two.
@Suite("Content a stream shows is withdrawn once it passes maxAge", .timeLimit(.minutes(1)))
struct ContentExpiryTests {
    @Test func aFetchedValueIsWithdrawnFromTheErrorOfARefreshThatFailsAfterItExpired() async throws {
        let f = R10Fixture(origin: [.success("v1"), .failure(down), .failure(down)], otherwise: nil)
        let store = f.store
        let recorder = R10Recorder(store.publish())
        await recorder.waitFor { $0.content == "v1" && $0.isCompleted }
        f.clock.advance(by: .seconds(59))
        await store.refresh()
        await recorder.waitFor(\.isError)
        #expect(recorder.rendered.last == "error(v1)", "withdrawn before maxAge")
        f.clock.advance(by: .seconds(1))  // exactly maxAge old: expired
        await store.refresh()
        await eventually { recorder.rendered.filter { $0.hasPrefix("error") }.count == 2 }
        #expect(recorder.rendered.last == "error(nil)")
        // A `.loading` state may be replaced in the stream's buffer by the `.error` that follows it, but
        // one that arrives never shows the expired value.
        #expect(!recorder.rendered.drop { $0 != "error(v1)" }.contains("loading(v1)"))
        recorder.cancel()
        await f.waitUntilQuiet()
    }

    @Test func anUpdatedValueIsWithdrawnOnceItExpires() async throws {
        let f = R10Fixture(cached: "cached", origin: [.failure(down)], otherwise: nil)
        let store = f.store
        let recorder = R10Recorder(store.publish())
        await recorder.waitFor { $0.content == "cached" && $0.isCompleted }
        await store.update(newData: "updated")
        await recorder.waitFor { $0.content == "updated" }
        f.clock.advance(by: .seconds(60))
        await store.refresh()
        await recorder.waitFor(\.isError)
        #expect(recorder.rendered.last == "error(nil)")
        #expect(!recorder.rendered.contains("loading(updated)"))
        recorder.cancel()
        await f.waitUntilQuiet()
    }

    @Test func anInvalidationAfterTheValueExpiredAnnouncesLoadingWithoutIt() async throws {
        let f = R10Fixture(cached: "cached")
        f.origin.hold()
        let store = f.store
        let recorder = R10Recorder(store.publish())
        await recorder.waitFor { $0.content == "cached" && $0.isCompleted }
        f.clock.advance(by: .seconds(61))
        let invalidation = Task { try await store.invalidate() }
        await recorder.waitFor(\.isLoading)
        #expect(recorder.rendered.last == "loading(nil)")
        f.origin.release()
        try await invalidation.value
        await recorder.waitFor { $0.content == "fresh-1" && $0.isCompleted }
        recorder.cancel()
        await f.waitUntilIdle()
    }

    /// A stream that joins after the value expired never gets it from the state machine's content
    /// either: its first state comes from its own read, which finds nothing usable.
    @Test func aStreamThatJoinsAFailingKeyAfterExpiryStartsWithoutTheValue() async throws {
        let f = R10Fixture(cached: "cached", age: .seconds(50), origin: [.failure(down)], otherwise: nil)
        f.origin.hold()
        let store = f.store
        let first = R10Recorder(store.publish())
        await first.waitFor(\.isLoading)
        #expect(first.rendered == ["loading(cached)"])
        f.clock.advance(by: .seconds(10))
        let second = R10Recorder(store.publish())
        await second.waitForStates(1)
        #expect(second.rendered == ["loading(nil)"])
        f.origin.release()
        await first.waitFor(\.isError)
        await second.waitFor(\.isError)
        #expect(first.rendered.last == "error(nil)")
        #expect(second.rendered.last == "error(nil)")
        first.cancel()
        second.cancel()
        await f.waitUntilQuiet()
    }

    /// A stream whose first read is overtaken by a write starts from the key's current state; if that
    /// state's value passed `maxAge` while the stream read, it is fetched again, never shown.
    @Test func aStreamWhoseReadWasOvertakenNeverStartsFromAnExpiredValue() async throws {
        let f = R10Fixture(cached: "cached")
        let store = f.store
        let first = R10Recorder(store.publish())
        await first.waitFor { $0.content == "cached" && $0.isCompleted }
        f.cache.holdReads()
        let second = R10Recorder(store.publish())
        await eventually { f.cache.heldReadCount == 1 }
        await store.update(newData: "updated")  // completes while the second stream reads: its read is outdated
        await first.waitFor { $0.content == "updated" }
        f.clock.advance(by: .seconds(61))  // "updated" is now past maxAge
        f.cache.releaseReads()
        await second.waitFor { $0.content == "fresh-1" && $0.isCompleted }
        #expect(!second.rendered.contains { $0.contains("(updated)") })
        first.cancel()
        second.cancel()
        await f.waitUntilIdle()
    }

    /// An update's expiry is taken just before its write, not before its read of the current value: a
    /// slow read does not shorten the life of the value it writes.
    @Test func anUpdateWithASlowReadKeepsItsValueUntilTheValueExpires() async throws {
        let f = R10Fixture(cached: "cached", origin: [.failure(down)], otherwise: nil)
        let store = f.store
        let recorder = R10Recorder(store.publish())
        await recorder.waitFor { $0.content == "cached" && $0.isCompleted }
        f.cache.holdReads()
        let update = Task { try await store.update { _ in "updated" } }
        await eventually { f.cache.heldReadCount == 1 }
        f.clock.advance(by: .seconds(30))
        f.cache.releaseReads()
        try await update.value
        await recorder.waitFor { $0.content == "updated" }
        f.clock.advance(by: .seconds(40))  // the entry is 40 s old: inside maxAge
        await store.refresh()
        await recorder.waitFor(\.isError)
        #expect(recorder.rendered.last == "error(updated)", "a value 40 s old was withdrawn (maxAge 60 s)")
        recorder.cancel()
        await f.waitUntilQuiet()
    }
}
