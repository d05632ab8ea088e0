import Observation
import Testing

@testable import StoreFlowable

private let down = TestError("down")

/// `Loader` over hand-fed stores: what each state shows, cancellation and the origin's own
/// cancellation, a state already in flight to a superseded load, and a stream that ends by itself.
@MainActor
@Suite("Loader state mapping", .timeLimit(.minutes(1)))
struct LoaderStateMappingTests {
    /// Sends `state` to the loader's stream of `key` and waits until the loader has applied it.
    private func send(
        _ state: LoadingState<String>, to key: String = "key", through feeds: HandFedStores,
        _ loader: Loader<String, String>
    ) async {
        feeds.send(state, to: key)
        let sent = "\(state)"
        await eventuallyOnMain { loader.state.map { "\($0)" } == sent }
    }

    @Test func eachStateIsMirroredInObjectErrorAndIsLoading() async {
        let feeds = HandFedStores()
        let loader = Loader<String, String>(storeFor: feeds.store(for:))
        loader.load(key: "key")
        #expect(loader.isLoading)
        #expect(loader.state == nil)

        await send(.loading(content: nil), through: feeds, loader)
        #expect(loader.object == nil)
        #expect(loader.isLoading)
        #expect(loader.error == nil)

        await send(.completed("v1"), through: feeds, loader)
        #expect(loader.object == "v1")
        #expect(!loader.isLoading)
        #expect(loader.error == nil)

        await send(.loading(content: "v1"), through: feeds, loader)
        #expect(loader.object == "v1")
        #expect(loader.isLoading)

        await send(.error(content: "v1", rawError: down), through: feeds, loader)
        #expect(loader.object == "v1")
        #expect(!loader.isLoading)
        #expect(loader.error as? TestError == down)

        // An error stays shown while the next attempt loads, and a value clears it.
        await send(.loading(content: "v1"), through: feeds, loader)
        #expect(loader.error as? TestError == down)
        #expect(loader.isLoading)
        await send(.completed("v2"), through: feeds, loader)
        #expect(loader.object == "v2")
        #expect(loader.error == nil)
        #expect(!loader.isLoading)

        // The store withdrew its value (past maxAge, say): the loader shows what the store shows.
        await send(.error(content: nil, rawError: down), through: feeds, loader)
        #expect(loader.object == nil)
        #expect(loader.error as? TestError == down)
        #expect(feeds.publishCount(of: "key") == 1)
    }

    @Test func aCancellationLeavesTheShownErrorAsItWas() async {
        let feeds = HandFedStores()
        let loader = Loader<String, String>(storeFor: feeds.store(for:))
        loader.load(key: "key")
        await send(.error(content: "v1", rawError: down), through: feeds, loader)
        await send(.loading(content: "v1"), through: feeds, loader)
        await send(.error(content: "v1", rawError: CancellationError()), through: feeds, loader)
        #expect(loader.error as? TestError == down)
        #expect(!loader.isLoading)
        #expect(loader.object == "v1")
        await send(.completed("v2"), through: feeds, loader)
        await send(.error(content: "v2", rawError: CancellationError()), through: feeds, loader)
        #expect(loader.error == nil)
        #expect(loader.object == "v2")
    }

    /// `originCancelled` is the store's word for an origin that threw `CancellationError` although
    /// nobody cancelled it (a timeout): a failure the user should see, not this loader's cancellation.
    @Test func anOriginThatCancelledItselfIsShownAsAFailure() async {
        let feeds = HandFedStores()
        let loader = Loader<String, String>(storeFor: feeds.store(for:))
        loader.load(key: "key")
        await send(.error(content: nil, rawError: StoreFlowableError.originCancelled), through: feeds, loader)
        guard case .originCancelled? = loader.error as? StoreFlowableError else {
            Issue.record("expected originCancelled, got \(String(describing: loader.error))")
            return
        }
        #expect(!loader.isLoading)
    }

    /// The superseded load's task has already been handed a state when the new load starts; the
    /// generation check drops it, although cancelling the task came too late to stop it (without the
    /// check, "late a" is shown).
    @Test func aStateAlreadyInFlightToASupersededLoadIsNeverApplied() async {
        let feeds = HandFedStores()
        let loader = Loader<String, String>(storeFor: feeds.store(for:))
        let history = ObservedHistory { loader.object }
        loader.load(key: "a")
        await send(.completed("a1"), to: "a", through: feeds, loader)
        await eventuallyOnMain { history.values.last == "a1" }
        // In one main-actor turn: hand "a"'s task a state (it is resumed, but cannot run yet), then
        // load "b".
        feeds.send(.completed("late a"), to: "a")
        loader.load(key: "b")
        #expect(loader.object == nil)
        #expect(feeds.endedCount(of: "a") == 1)
        // "a"'s task was resumed with "late a" before this test's turn ended: it runs on the main actor
        // ahead of this test once the test yields.
        for _ in 0..<10 { await Task.yield() }
        #expect(loader.object == nil)
        #expect(loader.state == nil)
        #expect(loader.key == "b")
        #expect(loader.isLoading)
        await send(.completed("b1"), to: "b", through: feeds, loader)
        await eventuallyOnMain { history.values.last == "b1" }
        #expect(history.values == [nil, "a1", nil, "b1"])
    }

    @Test func aStreamThatEndsByItselfEndsTheLoadAndALaterLoadSubscribesAgain() async {
        let feeds = HandFedStores()
        let loader = Loader<String, String>(storeFor: feeds.store(for:))
        loader.load(key: "key")
        await send(.loading(content: "v1"), through: feeds, loader)
        feeds.finish("key")
        await eventuallyOnMain { !loader.isLoading }
        #expect(loader.object == "v1")
        #expect(loader.error == nil)

        loader.load(key: "key")
        #expect(feeds.publishCount(of: "key") == 2)
        #expect(loader.isLoading)
        await send(.completed("v2"), through: feeds, loader)
        #expect(loader.object == "v2")

        await send(.loading(content: "v2"), through: feeds, loader)
        feeds.finish("key")
        await eventuallyOnMain { !loader.isLoading }
        loader.refresh(key: "key")
        #expect(feeds.publishCount(of: "key") == 3)
        #expect(loader.isLoading)
    }

    /// The stream ends by itself right after a `load(key:)` of its key, which found the load running:
    /// the call is honoured once the end reaches the loader (it was dropped).
    @Test func aLoadMadeAsTheStreamEndsSubscribesAgain() async {
        let feeds = HandFedStores()
        let loader = Loader<String, String>(storeFor: feeds.store(for:))
        loader.load(key: "key")
        await send(.completed("v1"), through: feeds, loader)
        #expect(!loader.isLoading)
        feeds.finish("key")
        loader.load(key: "key")
        await eventuallyOnMain { feeds.publishCount(of: "key") == 2 }
        #expect(loader.isLoading)
        await send(.completed("v2"), through: feeds, loader)
        #expect(loader.object == "v2")
    }

    @Test func observationReportsEachNewKeyAndState() async {
        let feeds = HandFedStores()
        let loader = Loader<String, String>(storeFor: feeds.store(for:))
        let keys = ObservedHistory { loader.key }
        let states = ObservedHistory { loader.state.map { "\($0)" } }
        loader.load(key: "a")
        await eventuallyOnMain { keys.values.last == "a" }
        await send(.completed("a1"), to: "a", through: feeds, loader)
        await eventuallyOnMain { states.changes == 1 }
        loader.load(key: "b")
        await eventuallyOnMain { keys.values.last == "b" && states.changes == 2 }
        #expect(keys.values == [nil, "a", "b"])
        #expect(states.values == [nil, "\(LoadingState<String>.completed("a1"))", nil])
    }

    /// A state equal to the one shown changes nothing that observers see. Each repeat is followed by a
    /// change of ``Loader/isLoading`` in the same application (or by the stream's end), so the wait for
    /// it proves the repeat was applied, with no other state in between to mask a reported change.
    @Test func aRepeatedStateOrAnEqualErrorIsNotReportedAsAChange() async {
        let feeds = HandFedStores()
        let loader = Loader<String, String>(storeFor: feeds.store(for:))
        loader.load(key: "key")
        await send(.error(content: "v1", rawError: down), through: feeds, loader)
        await send(.loading(content: "v1"), through: feeds, loader)
        #expect(loader.isLoading)

        // An equal error (another value of the same Equatable error) while loading ends the load only.
        let errorChanged = ChangeFlag { _ = loader.error }
        let objectChanged = ChangeFlag { _ = loader.object }
        feeds.send(.error(content: "v1", rawError: TestError("down")), to: "key")
        await eventuallyOnMain { !loader.isLoading }
        #expect(!errorChanged.fired)
        #expect(!objectChanged.fired)

        // The same loading state twice, then the stream's end (which changes nothing but isLoading).
        await send(.loading(content: "v1"), through: feeds, loader)
        let stateChanged = ChangeFlag { _ = loader.state }
        feeds.send(.loading(content: "v1"), to: "key")
        feeds.finish("key")
        await eventuallyOnMain { !loader.isLoading }
        #expect(!stateChanged.fired)
        #expect(!objectChanged.fired)

        // A different error is a change.
        loader.load(key: "key")
        let otherErrorChanged = ChangeFlag { _ = loader.error }
        await send(.error(content: "v1", rawError: TestError("other")), through: feeds, loader)
        #expect(otherErrorChanged.fired)
    }
}

/// Whether what `read` reads was changed since the flag was made (one `withObservationTracking`
/// registration; Observation calls it synchronously, in the change's `willSet`).
@MainActor
private final class ChangeFlag {
    private(set) var fired = false

    init(_ read: @escaping @MainActor () -> Void) {
        withObservationTracking {
            read()
        } onChange: { [weak self] in
            MainActor.assumeIsolated { self?.fired = true }
        }
    }
}
