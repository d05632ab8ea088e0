import StoreFlowable
import StoreFlowableTesting
import Testing

/// An error with a readable description, private to this file.
private struct SnapshotFailure: Error, CustomStringConvertible {
    let name: String
    var description: String { name }
}

@Suite(.timeLimit(.minutes(1))) struct StateSnapshotTests {
    @Test func statesMapToTheirSnapshots() {
        #expect(StateSnapshot(LoadingState<Int>.completed(2)) == .completed(2))
        #expect(LoadingState<Int>.loading(content: nil).snapshot == .loading(nil))
        #expect(LoadingState<Int>.loading(content: 1).snapshot == .loading(1))
        #expect(LoadingState<Int>.completed(2).snapshot == .completed(2))
        #expect(
            LoadingState<Int>.error(content: 3, rawError: SnapshotFailure(name: "offline")).snapshot
                == .error(3, "offline"))
    }

    @Test func pagingDirectionsAreKept() {
        let state = LoadingState<Int>.completed(
            content: 1, next: .loading, prev: .error(rawError: SnapshotFailure(name: "page")))
        #expect(state.snapshot == .completedPaging(1, next: .loading, prev: .error("page")))
        #expect(state.snapshot != .completed(1))
        let more = LoadingState<Int>.completed(
            content: 1, next: .fixed(canRequestAdditionalData: true), prev: .noMoreData)
        #expect(more.snapshot == .completedPaging(1, next: .fixed(canRequestAdditionalData: true), prev: .noMoreData))
    }

    @Test func bothSpellingsOfCompletedAreEqual() {
        let paging = StateSnapshot<Int>.completedPaging(1, next: .noMoreData, prev: .noMoreData)
        #expect(paging == .completed(1))
        #expect(StateSnapshot<Int>.completed(1) == paging)
        #expect(paging != .completed(2))
    }

    @Test func differentStatesAreNotEqual() {
        #expect(StateSnapshot<Int>.loading(1) != .loading(nil))
        #expect(StateSnapshot<Int>.loading(1) != .completed(1))
        #expect(StateSnapshot<Int>.error(1, "a") != .error(1, "b"))
        #expect(StateSnapshot<Int>.error(1, "a") != .error(nil, "a"))
        #expect(StateSnapshot<Int>.error(nil, "a") != .loading(nil))
        #expect(
            StateSnapshot<Int>.completedPaging(1, next: .loading, prev: .noMoreData)
                != .completedPaging(1, next: .noMoreData, prev: .loading))
    }

    @Test func additionalStatesMapToTheirSnapshots() {
        #expect(AdditionalLoadingState.loading.snapshot == .loading)
        #expect(AdditionalLoadingState.noMoreData.snapshot == .fixed(canRequestAdditionalData: false))
        #expect(
            AdditionalLoadingState.fixed(canRequestAdditionalData: true).snapshot
                == .fixed(canRequestAdditionalData: true))
        #expect(AdditionalLoadingState.error(rawError: SnapshotFailure(name: "x")).snapshot == .error("x"))
        #expect(AdditionalSnapshot(.error(rawError: SnapshotFailure(name: "x"))) != .error("y"))
    }

    @Test func recorderSnapshotsCopyEveryState() async throws {
        let (stream, input) = AsyncStream.makeStream(of: LoadingState<String>.self)
        let recorder = StateRecorder(stream)
        input.yield(.loading(content: "stale"))
        input.yield(.error(content: "stale", rawError: SnapshotFailure(name: "offline")))
        try await recorder.waitUntil { $0.count == 2 }
        let snapshots: [StateSnapshot<String>] = recorder.snapshots
        #expect(snapshots == [.loading("stale"), .error("stale", "offline")])
    }

    @Test func descriptionsReadLikeTheCases() {
        #expect(StateSnapshot<String>.loading(nil).description == ".loading(nil)")
        #expect(StateSnapshot<String>.completed("fresh").description == #".completed("fresh")"#)
        #expect(StateSnapshot<String>.error("stale", "offline").description == #".error("stale", "offline")"#)
        #expect(
            StateSnapshot<Int>.completedPaging(1, next: .loading, prev: .noMoreData).description
                == ".completedPaging(1, next: .loading, prev: .fixed(canRequestAdditionalData: false))")
        #expect(AdditionalSnapshot.error("x").description == #".error("x")"#)
    }
}
