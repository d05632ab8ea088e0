import StoreFlowable
import StoreFlowableTesting
import Testing

private struct Plain: Error {
    let code: Int
}

private struct Coded: Error, Equatable {
    let code: Int
    let detail: String

    // Equal by code only: `==` is the error type's own, not its fields.
    static func == (lhs: Coded, rhs: Coded) -> Bool { lhs.code == rhs.code }
}

/// `LoadableState` and `ProcessState`: accessors, transforms, and equality that does better than the
/// seed's "any two errors are equal".
@Suite("LoadableState and ProcessState")
struct LoadableStateTests {
    @Test func accessorsTellTheCaseAndItsContents() {
        let states: [LoadableState<Int>] = [.absent, .loading, .error(Plain(code: 1)), .loaded(7)]
        #expect(states.map(\.isAbsent) == [true, false, false, false])
        #expect(states.map(\.isLoading) == [false, true, false, false])
        #expect(states.map(\.isError) == [false, false, true, false])
        #expect(states.map(\.isLoaded) == [false, false, false, true])
        #expect(states.map(\.data) == [nil, nil, nil, 7])
        #expect(states.map { ($0.error as? Plain)?.code } == [nil, nil, 1, nil])
    }

    @Test func mapTransformsOnlyALoadedValue() throws {
        #expect(LoadableState.loaded(2).map { $0 * 10 } == .loaded(20))
        #expect(LoadableState<Int>.loading.map { $0 * 10 } == .loading)
        #expect(LoadableState<Int>.absent.map { $0 * 10 } == .absent)
        let failed = LoadableState<Int>.error(Plain(code: 3)).map { "\($0)" }
        #expect((failed.error as? Plain)?.code == 3)
        #expect(throws: Plain.self) { try LoadableState.loaded(1).map { _ -> Int in throw Plain(code: 0) } }
    }

    @Test func compactMapTurnsNilIntoAbsent() {
        #expect(LoadableState.loaded("12").compactMap(Int.init) == .loaded(12))
        #expect(LoadableState.loaded("twelve").compactMap(Int.init) == .absent)
        #expect(LoadableState<String>.loading.compactMap(Int.init) == .loading)
    }

    /// The seed treated any two errors as equal, so a view skipping equal states missed a new failure.
    @Test func twoDifferentErrorsAreNotEqual() {
        #expect(LoadableState<Int>.error(Plain(code: 1)) != .error(Plain(code: 2)))
        #expect(LoadableState<Int>.error(Plain(code: 1)) == .error(Plain(code: 1)))
        #expect(LoadableState<Int>.error(Plain(code: 1)) != .error(CancellationError()))
    }

    @Test func anEquatableErrorComparesWithItsOwnEquality() {
        #expect(LoadableState<Int>.error(Coded(code: 1, detail: "a")) == .error(Coded(code: 1, detail: "b")))
        #expect(LoadableState<Int>.error(Coded(code: 1, detail: "a")) != .error(Coded(code: 2, detail: "a")))
    }

    @Test func differentCasesAreNeverEqual() {
        let states: [LoadableState<Int>] = [.absent, .loading, .error(Plain(code: 0)), .loaded(0)]
        for (i, left) in states.enumerated() {
            for (j, right) in states.enumerated() {
                #expect((left == right) == (i == j))
            }
        }
    }

    @Test func processStateTellsWhichProcessIsInWhichPhase() {
        enum Kind { case save, delete }
        let running = ProcessState<Kind>.running(.save)
        #expect(running.isRunning && running.isRunning(.save) && !running.isRunning(.delete))
        let failed = ProcessState<Kind>.failed(process: .delete, error: Plain(code: 4))
        #expect(failed.hasFailed && failed.hasFailed(.delete) && !failed.hasFailed(.save))
        #expect((failed.error as? Plain)?.code == 4)
        #expect(failed.process == .delete)
        let finished = ProcessState<Kind>.finished(.save)
        #expect(finished.hasFinished(.save) && !finished.hasFinished(.delete) && !finished.isRunning)
        #expect(ProcessState<Kind>.idle.isIdle && ProcessState<Kind>.idle.process == nil)
    }

    @Test func aSingleProcessReadsWithoutAKind() {
        let state: ProcessState<SingleProcess> = .running
        #expect(state.isRunning)
        #expect(ProcessState<SingleProcess>.finished.hasFinished)
        #expect(ProcessState<SingleProcess>.failed(Plain(code: 5)).hasFailed)
        #expect(ProcessState<SingleProcess>.failed(Plain(code: 5)) != .failed(Plain(code: 6)))
        #expect(ProcessState<SingleProcess>.running == .running)
    }
}

/// Converting between the store's `LoadingState` and `LoadableState`, and following a store as
/// `LoadableState`s.
@Suite("LoadableState and the store", .timeLimit(.minutes(1)))
struct LoadableStateBridgeTests {
    @Test func aStoreStateBecomesTheLoadableStateOfItsPhase() {
        #expect(LoadableState(LoadingState<Int>.loading(content: nil)) == .loading)
        #expect(LoadableState(LoadingState<Int>.loading(content: 3)) == .loading)
        #expect(LoadableState(LoadingState.completed(content: 3, next: .noMoreData, prev: .noMoreData)) == .loaded(3))
        #expect(LoadableState(LoadingState<Int>.error(content: 3, rawError: Plain(code: 9))) == .error(Plain(code: 9)))
    }

    @Test func aLoadableStateBecomesTheStoreStateOfItsPhase() {
        #expect(LoadingState(LoadableState<Int>.absent).content == nil)
        #expect(LoadingState(LoadableState<Int>.loading).isLoading)
        #expect(LoadingState(LoadableState.loaded(4)).content == 4)
        #expect(LoadableState(LoadingState(LoadableState<Int>.error(Plain(code: 1)))) == .error(Plain(code: 1)))
    }

    @Test func aStoreIsFollowedAsLoadableStates() async {
        let origin = ScriptedOrigin<Int>([.success(5)])
        let stores = KeyedStore(cache: MemoryCache<String, Int>(policy: .forever)) { _ in try await origin.fetch() }
        var seen: [LoadableState<Int>] = []
        for await state in stores["key"].publishLoadable() {
            seen.append(state)
            if state.isLoaded { break }
        }
        #expect(seen.last == .loaded(5))
        #expect(seen.dropLast().allSatisfy { $0.isLoading })
    }
}
