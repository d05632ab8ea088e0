import Testing

@testable import StoreFlowable

/// The comparison a `Loader` uses to assign a state only when it changed.
@Suite("LoadingState sameness")
struct LoadingStateSamenessTests {
    private struct Opaque: Sendable {
        let value: Int
    }

    @Test func equalStatesOfEachCaseAreTheSame() {
        let states: [LoadingState<String>] = [
            .loading(content: nil), .loading(content: "a"), .completed("a"),
            .completed(content: "a", next: .loading, prev: .fixed(canRequestAdditionalData: true)),
            .completed(content: "a", next: .error(rawError: TestError("page")), prev: .noMoreData),
            .error(content: nil, rawError: TestError("down")), .error(content: "a", rawError: TestError("down")),
        ]
        for (index, state) in states.enumerated() {
            for (otherIndex, other) in states.enumerated() {
                #expect(isSameState(state, other) == (index == otherIndex), "\(state) vs \(other)")
            }
        }
        #expect(!isSameState(nil, LoadingState<String>.loading(content: nil)))
    }

    @Test func errorsAreTheSameWhenEqualAndOfOneType() {
        let down = LoadingState<String>.error(content: nil, rawError: TestError("down"))
        #expect(isSameState(down, .error(content: nil, rawError: TestError("down"))))
        #expect(!isSameState(down, .error(content: nil, rawError: TestError("other"))))
        #expect(!isSameState(down, .error(content: nil, rawError: StoreFlowableError.originCancelled)))
    }

    @Test func contentOfATypeThatIsNotEquatableIsNeverTheSame() {
        let state = LoadingState<Opaque>.completed(Opaque(value: 1))
        #expect(!isSameState(state, state))
        #expect(isSameState(LoadingState<Opaque>.loading(content: nil), .loading(content: nil)))
    }
}
