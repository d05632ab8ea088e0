import StoreFlowable
import Testing

/// Two states, and the state their zip (contents added) must be.
struct ZipCase: Sendable, CustomTestStringConvertible {
    let lhs: LoadingState<Int>
    let rhs: LoadingState<Int>
    let expected: StatePicture<Int>

    init(_ lhs: LoadingState<Int>, _ rhs: LoadingState<Int>, _ expected: StatePicture<Int>) {
        self.lhs = lhs
        self.rhs = rhs
        self.expected = expected
    }

    var testDescription: String { "\(lhs) zip \(rhs)" }
}

/// Two directions, and the direction their zip must be.
struct AdditionalZipCase: Sendable, CustomTestStringConvertible {
    let lhs: AdditionalLoadingState
    let rhs: AdditionalLoadingState
    let expected: AdditionalPicture

    init(_ lhs: AdditionalLoadingState, _ rhs: AdditionalLoadingState, _ expected: AdditionalPicture) {
        self.lhs = lhs
        self.rhs = rhs
        self.expected = expected
    }

    var testDescription: String { "\(AdditionalPicture(lhs)) zip \(AdditionalPicture(rhs))" }
}

@Suite("LoadingState.zip")
struct LoadingStateZipTests {
    // Receiver states carry content 1 and error 1; argument states carry content 10 and error 2, so an
    // expected content of 11 means "combined" and the error id says whose error won.
    static let lhsLoadingNil = LoadingState<Int>.loading(content: nil)
    static let lhsLoading = LoadingState<Int>.loading(content: 1)
    static let lhsCompleted = LoadingState<Int>.completed(1)
    static let lhsErrorNil = LoadingState<Int>.error(content: nil, rawError: StateTestError(id: 1))
    static let lhsError = LoadingState<Int>.error(content: 1, rawError: StateTestError(id: 1))
    static let rhsLoadingNil = LoadingState<Int>.loading(content: nil)
    static let rhsLoading = LoadingState<Int>.loading(content: 10)
    static let rhsCompleted = LoadingState<Int>.completed(10)
    static let rhsErrorNil = LoadingState<Int>.error(content: nil, rawError: StateTestError(id: 2))
    static let rhsError = LoadingState<Int>.error(content: 10, rawError: StateTestError(id: 2))

    /// Every pair of kinds, with and without content, written out by hand.
    static let table: [ZipCase] = [
        ZipCase(lhsLoadingNil, rhsLoadingNil, .loading(nil)),
        ZipCase(lhsLoadingNil, rhsLoading, .loading(nil)),
        ZipCase(lhsLoadingNil, rhsCompleted, .loading(nil)),
        ZipCase(lhsLoadingNil, rhsErrorNil, .error(nil, id: 2)),
        ZipCase(lhsLoadingNil, rhsError, .error(nil, id: 2)),

        ZipCase(lhsLoading, rhsLoadingNil, .loading(nil)),
        ZipCase(lhsLoading, rhsLoading, .loading(11)),
        ZipCase(lhsLoading, rhsCompleted, .loading(11)),
        ZipCase(lhsLoading, rhsErrorNil, .error(nil, id: 2)),
        ZipCase(lhsLoading, rhsError, .error(11, id: 2)),

        ZipCase(lhsCompleted, rhsLoadingNil, .loading(nil)),
        ZipCase(lhsCompleted, rhsLoading, .loading(11)),
        ZipCase(lhsCompleted, rhsCompleted, .completed(11)),
        ZipCase(lhsCompleted, rhsErrorNil, .error(nil, id: 2)),
        ZipCase(lhsCompleted, rhsError, .error(11, id: 2)),

        ZipCase(lhsErrorNil, rhsLoadingNil, .error(nil, id: 1)),
        ZipCase(lhsErrorNil, rhsLoading, .error(nil, id: 1)),
        ZipCase(lhsErrorNil, rhsCompleted, .error(nil, id: 1)),
        ZipCase(lhsErrorNil, rhsErrorNil, .error(nil, id: 1)),
        ZipCase(lhsErrorNil, rhsError, .error(nil, id: 1)),

        ZipCase(lhsError, rhsLoadingNil, .error(nil, id: 1)),
        ZipCase(lhsError, rhsLoading, .error(11, id: 1)),
        ZipCase(lhsError, rhsCompleted, .error(11, id: 1)),
        ZipCase(lhsError, rhsErrorNil, .error(nil, id: 1)),
        ZipCase(lhsError, rhsError, .error(11, id: 1)),
    ]

    @Test(arguments: table)
    func zipFollowsTheErrorThenLoadingThenCompletedRules(_ testCase: ZipCase) {
        let zipped = testCase.lhs.zip(testCase.rhs) { $0 + $1 }
        #expect(zipped.picture == testCase.expected)
    }

    @Test(arguments: table)
    func transformRunsOnlyWhenBothStatesHaveContent(_ testCase: ZipCase) {
        var calls = 0
        _ = testCase.lhs.zip(testCase.rhs) { lhs, rhs -> Int in
            calls += 1
            return lhs + rhs
        }
        let bothHaveContent = testCase.lhs.content != nil && testCase.rhs.content != nil
        #expect(calls == (bothHaveContent ? 1 : 0))
    }

    @Test func transformReceivesTheReceiversContentFirst() {
        let zipped = LoadingState<String>.completed("user").zip(LoadingState<Int>.completed(3)) { "\($0)/\($1)" }
        #expect(zipped.picture == .completed("user/3"))
    }

    @Test func zipRethrowsWhatTheTransformThrows() throws {
        #expect(throws: StateTestError(id: 3)) {
            try Self.lhsCompleted.zip(Self.rhsCompleted) { _, _ -> Int in throw StateTestError(id: 3) }
        }
        // The argument has no content, so the throwing transform never runs.
        let zipped = try Self.lhsCompleted.zip(Self.rhsLoadingNil) { _, _ -> Int in throw StateTestError(id: 3) }
        #expect(zipped.picture == .loading(nil))
    }

    // MARK: next and prev

    static let additionalTable: [AdditionalZipCase] = [
        AdditionalZipCase(.fixed(canRequestAdditionalData: false), .noMoreData, .fixed(canRequest: false)),
        AdditionalZipCase(.fixed(canRequestAdditionalData: true), .noMoreData, .fixed(canRequest: true)),
        AdditionalZipCase(.noMoreData, .fixed(canRequestAdditionalData: true), .fixed(canRequest: true)),
        AdditionalZipCase(
            .fixed(canRequestAdditionalData: true), .fixed(canRequestAdditionalData: true), .fixed(canRequest: true)),
        AdditionalZipCase(.fixed(canRequestAdditionalData: true), .loading, .loading),
        AdditionalZipCase(.loading, .fixed(canRequestAdditionalData: true), .loading),
        AdditionalZipCase(.loading, .noMoreData, .loading),
        AdditionalZipCase(.loading, .loading, .loading),
        AdditionalZipCase(.error(rawError: StateTestError(id: 1)), .noMoreData, .error(id: 1)),
        AdditionalZipCase(
            .fixed(canRequestAdditionalData: true), .error(rawError: StateTestError(id: 2)), .error(id: 2)),
        AdditionalZipCase(.error(rawError: StateTestError(id: 1)), .loading, .error(id: 1)),
        AdditionalZipCase(.loading, .error(rawError: StateTestError(id: 2)), .error(id: 2)),
        AdditionalZipCase(
            .error(rawError: StateTestError(id: 1)), .error(rawError: StateTestError(id: 2)), .error(id: 1)),
    ]

    @Test(arguments: additionalTable)
    func additionalStatesCombineErrorThenLoadingThenEitherCanRequestMore(_ testCase: AdditionalZipCase) {
        #expect(AdditionalPicture(testCase.lhs.zip(testCase.rhs)) == testCase.expected)
    }

    @Test(arguments: additionalTable)
    func completedStatesCombineNextAndPrevIndependently(_ testCase: AdditionalZipCase) {
        // `next` gets the case's pair; `prev` gets a pair that combines to something else, to catch a
        // mix-up of the two directions.
        let lhs = LoadingState<Int>.completed(content: 1, next: testCase.lhs, prev: .noMoreData)
        let rhs = LoadingState<Int>.completed(
            content: 10, next: testCase.rhs, prev: .error(rawError: StateTestError(id: 7)))
        let zipped = lhs.zip(rhs) { $0 + $1 }
        #expect(zipped.picture == .completed(11, next: testCase.expected, prev: .error(id: 7)))

        let swapped = LoadingState<Int>.completed(content: 1, next: .noMoreData, prev: testCase.lhs)
            .zip(.completed(content: 10, next: .loading, prev: testCase.rhs)) { $0 + $1 }
        #expect(swapped.picture == .completed(11, next: .loading, prev: testCase.expected))
    }

    // MARK: Three states

    /// All five receiver-style states; reused for the three positions with different content and errors.
    static func variants(content: Int, errorID: Int) -> [LoadingState<Int>] {
        [
            .loading(content: nil), .loading(content: content), .completed(content),
            .completed(content: content, next: .loading, prev: .fixed(canRequestAdditionalData: true)),
            .error(content: nil, rawError: StateTestError(id: errorID)),
            .error(content: content, rawError: StateTestError(id: errorID)),
        ]
    }

    @Test(arguments: variants(content: 1, errorID: 1), variants(content: 10, errorID: 2))
    func threeWayZipEqualsZippingPairwiseFromTheLeft(_ first: LoadingState<Int>, _ second: LoadingState<Int>) {
        for third in Self.variants(content: 100, errorID: 3) {
            let threeWay = first.zip(second, third) { $0 + $1 + $2 }
            let pairwise = first.zip(second) { $0 + $1 }.zip(third) { $0 + $1 }
            let rightFirst = first.zip(second.zip(third) { $0 + $1 }) { $0 + $1 }
            #expect(threeWay.picture == pairwise.picture, "third: \(third)")
            #expect(threeWay.picture == rightFirst.picture, "third: \(third)")
        }
    }

    @Test func threeWayZipPassesContentsInOrder() {
        let zipped = LoadingState<String>.completed("a").zip(LoadingState<Int>.completed(2), .completed(true)) {
            "\($0)-\($1)-\($2)"
        }
        #expect(zipped.picture == .completed("a-2-true"))
    }

    @Test func threeWayZipTakesTheFirstErrorInReceiverFirstOrder() {
        let second = LoadingState<Int>.error(content: 10, rawError: StateTestError(id: 2))
        let third = LoadingState<Int>.error(content: 100, rawError: StateTestError(id: 3))
        #expect(Self.lhsCompleted.zip(second, third) { $0 + $1 + $2 }.picture == .error(111, id: 2))
        #expect(Self.lhsLoading.zip(Self.rhsCompleted, third) { $0 + $1 + $2 }.picture == .error(111, id: 3))
        #expect(Self.lhsErrorNil.zip(second, third) { $0 + $1 + $2 }.picture == .error(nil, id: 1))
    }

    @Test func threeWayZipIsLoadingWhenAnyIsLoadingAndNoneFailed() {
        let third = LoadingState<Int>.loading(content: 100)
        #expect(Self.lhsCompleted.zip(Self.rhsCompleted, third) { $0 + $1 + $2 }.picture == .loading(111))
        #expect(Self.lhsCompleted.zip(Self.rhsLoadingNil, third) { $0 + $1 + $2 }.picture == .loading(nil))
        #expect(
            Self.lhsCompleted.zip(Self.rhsCompleted, .completed(100)) { $0 + $1 + $2 }.picture == .completed(111))
    }
}
