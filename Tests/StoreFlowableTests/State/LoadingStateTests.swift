import StoreFlowable
import Testing

/// One state and what the conveniences must report for it.
struct ContentCase: Sendable, CustomTestStringConvertible {
    let state: LoadingState<Int>
    let content: Int?
    let isLoading: Bool
    let errorID: Int?
    /// The `doAction` closure that must run.
    let action: String

    var testDescription: String { state.description }
}

@Suite("LoadingState conveniences")
struct LoadingStateTests {
    static let cases: [ContentCase] = [
        ContentCase(state: .loading(content: nil), content: nil, isLoading: true, errorID: nil, action: "loading"),
        ContentCase(state: .loading(content: 1), content: 1, isLoading: true, errorID: nil, action: "loading"),
        ContentCase(state: .completed(2), content: 2, isLoading: false, errorID: nil, action: "completed"),
        ContentCase(
            state: .completed(content: 3, next: .loading, prev: .error(rawError: StateTestError(id: 9))),
            content: 3, isLoading: false, errorID: nil, action: "completed"),
        ContentCase(
            state: .error(content: nil, rawError: StateTestError(id: 4)),
            content: nil, isLoading: false, errorID: 4, action: "error"),
        ContentCase(
            state: .error(content: 5, rawError: StateTestError(id: 6)),
            content: 5, isLoading: false, errorID: 6, action: "error"),
    ]

    // MARK: content, isLoading, rawError

    @Test(arguments: cases)
    func contentIsTheContentOfEveryKindOfState(_ testCase: ContentCase) {
        #expect(testCase.state.content == testCase.content)
    }

    @Test(arguments: cases)
    func isLoadingOnlyForTheLoadingState(_ testCase: ContentCase) {
        #expect(testCase.state.isLoading == testCase.isLoading)
    }

    @Test(arguments: cases)
    func rawErrorOnlyForTheErrorStateNotForAFailedPage(_ testCase: ContentCase) {
        #expect((testCase.state.rawError as? StateTestError)?.id == testCase.errorID)
        #expect((testCase.state.rawError == nil) == (testCase.errorID == nil))
    }

    // MARK: doAction

    @Test(arguments: cases)
    func doActionRunsExactlyTheClosureOfTheStateWithItsValues(_ testCase: ContentCase) {
        var calls: [String] = []
        let result = testCase.state.doAction(
            onLoading: { content in
                calls.append("loading")
                return "loading \(String(describing: content))"
            },
            onCompleted: { content, next, prev in
                calls.append("completed")
                return "completed \(content) \(AdditionalPicture(next)) \(AdditionalPicture(prev))"
            },
            onError: { content, error in
                calls.append("error")
                return "error \(String(describing: content)) \(String(describing: (error as? StateTestError)?.id))"
            }
        )
        #expect(calls == [testCase.action])
        switch testCase.state {
        case .loading:
            #expect(result == "loading \(String(describing: testCase.content))")
        case .completed(_, let next, let prev):
            let content = testCase.content ?? -1
            #expect(result == "completed \(content) \(AdditionalPicture(next)) \(AdditionalPicture(prev))")
        case .error:
            let id = String(describing: testCase.errorID)
            #expect(result == "error \(String(describing: testCase.content)) \(id)")
        }
    }

    @Test func doActionRethrowsWhatTheClosureThrows() {
        let state = LoadingState<Int>.completed(1)
        #expect(throws: StateTestError(id: 7)) {
            try state.doAction(
                onLoading: { _ in 0 },
                onCompleted: { _, _, _ in throw StateTestError(id: 7) },
                onError: { _, _ in 0 }
            )
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: cases)
    func asyncDoActionAwaitsInsideTheClosureOfTheState(_ testCase: ContentCase) async {
        let action = await testCase.state.doAction(
            onLoading: { _ in await Self.echo("loading") },
            onCompleted: { _, _, _ in await Self.echo("completed") },
            onError: { _, _ in await Self.echo("error") }
        )
        #expect(action == testCase.action)
    }

    @Test(.timeLimit(.minutes(1)))
    @MainActor
    func asyncDoActionRunsOnTheCallersActorAndRethrows() async {
        // `seen` is main-actor state: the closures may mutate it only because they run on the caller's
        // actor, which the compiler checks and `assertIsolated` confirms at run time.
        var seen: [Int?] = []
        let state = LoadingState<Int>.error(content: 3, rawError: StateTestError(id: 1))
        do {
            let result: Int = try await state.doAction(
                onLoading: { _ in 0 },
                onCompleted: { _, _, _ in 0 },
                onError: { content, _ in
                    MainActor.assertIsolated()
                    seen.append(content)
                    await Task.yield()
                    seen.append(content)
                    throw StateTestError(id: 2)
                }
            )
            Issue.record("Expected a throw, got \(result)")
        } catch {
            #expect(error as? StateTestError == StateTestError(id: 2))
        }
        #expect(seen == [3, 3])
    }

    // MARK: mapContent

    @Test(arguments: cases)
    func mapContentTransformsOnlyTheContent(_ testCase: ContentCase) {
        var calls = 0
        let mapped = testCase.state.mapContent { content -> String in
            calls += 1
            return "#\(content)"
        }
        #expect(mapped.picture == Self.expectedMapping(of: testCase.state))
        #expect(calls == (testCase.content == nil ? 0 : 1))
    }

    @Test(.timeLimit(.minutes(1)), arguments: cases)
    func asyncMapContentTransformsOnlyTheContent(_ testCase: ContentCase) async {
        let mapped = await testCase.state.mapContent { content in await Self.echo("#\(content)") }
        #expect(mapped.picture == Self.expectedMapping(of: testCase.state))
    }

    @Test func mapContentRethrowsWhatTheTransformThrows() throws {
        #expect(throws: StateTestError(id: 8)) {
            try LoadingState<Int>.loading(content: 1).mapContent { _ -> Int in throw StateTestError(id: 8) }
        }
        // No content, so the throwing transform never runs.
        let mapped = try LoadingState<Int>.loading(content: nil).mapContent { _ -> Int in
            throw StateTestError(id: 8)
        }
        #expect(mapped.picture == .loading(nil))
    }

    @Test(.timeLimit(.minutes(1)))
    func asyncMapContentRethrowsWhatTheTransformThrows() async {
        await #expect(throws: StateTestError(id: 8)) {
            try await LoadingState<Int>.completed(1).mapContent { _ -> Int in
                await Task.yield()
                throw StateTestError(id: 8)
            }
        }
    }

    // MARK: description

    @Test(arguments: [
        (LoadingState<Int>.loading(content: nil), "loading(content: nil)"),
        (.loading(content: 2), "loading(content: 2)"),
        (.completed(3), "completed(3)"),
        (
            .completed(content: 3, next: .loading, prev: .fixed(canRequestAdditionalData: true)),
            "completed(3, next: loading, prev: fixed(canRequestAdditionalData: true))"
        ),
        (
            .completed(content: 3, next: .error(rawError: StateTestError(id: 1)), prev: .noMoreData),
            "completed(3, next: error(rawError: StateTestError(id: 1)), prev: fixed(canRequestAdditionalData: false))"
        ),
        (.error(content: nil, rawError: StateTestError(id: 5)), "error(content: nil, rawError: StateTestError(id: 5))"),
        (.error(content: 2, rawError: StateTestError(id: 5)), "error(content: 2, rawError: StateTestError(id: 5))"),
    ])
    func descriptionIsShortAndReadable(_ state: LoadingState<Int>, _ expected: String) {
        #expect(state.description == expected)
        #expect("\(state)" == expected)
    }

    // MARK: Helpers

    /// Returns `value` after a suspension point, so a closure that calls it really awaits.
    private static func echo<Value: Sendable>(_ value: Value) async -> Value {
        await Task.yield()
        return value
    }

    /// What `mapContent { "#\($0)" }` must give for `state`, written out case by case.
    private static func expectedMapping(of state: LoadingState<Int>) -> StatePicture<String> {
        switch state {
        case .loading(let content):
            .loading(content.map { "#\($0)" })
        case .completed(let content, let next, let prev):
            .completed("#\(content)", next: AdditionalPicture(next), prev: AdditionalPicture(prev))
        case .error(let content, let error):
            .error(content.map { "#\($0)" }, id: (error as? StateTestError)?.id)
        }
    }
}
