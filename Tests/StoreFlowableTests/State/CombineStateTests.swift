import StoreFlowable
import Testing

/// An input stream of states whose termination is reported, by name, on a shared stream.
private struct Input<Content: Sendable> {
    let stream: AsyncStream<LoadingState<Content>>
    let continuation: AsyncStream<LoadingState<Content>>.Continuation

    init(_ name: String, reportingTo terminations: AsyncStream<Termination>.Continuation) {
        (stream, continuation) = AsyncStream.makeStream(of: LoadingState<Content>.self)
        continuation.onTermination = { termination in
            switch termination {
            case .cancelled: terminations.yield(Termination(name: name, cancelled: true))
            case .finished: terminations.yield(Termination(name: name, cancelled: false))
            @unknown default: terminations.yield(Termination(name: name, cancelled: false))
            }
        }
    }
}

/// How an input stream ended: cancelled by its consumer, or finished by its producer.
private struct Termination: Hashable, Sendable {
    let name: String
    let cancelled: Bool
}

@Suite("AsyncStream.combineState")
struct CombineStateTests {
    @Test(.timeLimit(.minutes(1)))
    func emitsNothingUntilEveryInputHasEmitted() async {
        let (_, reporter) = AsyncStream.makeStream(of: Termination.self)
        let a = Input<Int>("a", reportingTo: reporter)
        let b = Input<Int>("b", reportingTo: reporter)
        let combined = a.stream.combineState(b.stream) { $0 + $1 }
        a.continuation.yield(.completed(1))
        a.continuation.yield(.loading(content: 2))
        a.continuation.finish()
        b.continuation.finish()
        // Any state emitted early would still sit in the output's one-element buffer.
        #expect(await Self.collect(combined).isEmpty)
    }

    @Test(.timeLimit(.minutes(1)))
    func threeWayEmitsNothingUntilEveryInputHasEmitted() async {
        let (_, reporter) = AsyncStream.makeStream(of: Termination.self)
        let a = Input<Int>("a", reportingTo: reporter)
        let b = Input<Int>("b", reportingTo: reporter)
        let c = Input<Int>("c", reportingTo: reporter)
        let combined = a.stream.combineState(b.stream, c.stream) { $0 + $1 + $2 }
        a.continuation.yield(.completed(1))
        b.continuation.yield(.completed(10))
        a.continuation.finish()
        b.continuation.finish()
        c.continuation.finish()
        #expect(await Self.collect(combined).isEmpty)
    }

    @Test(.timeLimit(.minutes(1)))
    func emitsTheZipOfTheLatestStatesUntilAllInputsFinish() async {
        let (_, reporter) = AsyncStream.makeStream(of: Termination.self)
        let a = Input<Int>("a", reportingTo: reporter)
        let b = Input<Int>("b", reportingTo: reporter)
        var output = a.stream.combineState(b.stream) { $0 + $1 }.makeAsyncIterator()

        // Each step yields one input state and reads the one combination it produces.
        a.continuation.yield(.loading(content: nil))
        b.continuation.yield(.completed(10))
        #expect(await output.next()?.picture == .loading(nil))

        a.continuation.yield(.completed(1))
        #expect(await output.next()?.picture == .completed(11))

        b.continuation.yield(.error(content: 20, rawError: StateTestError(id: 5)))
        #expect(await output.next()?.picture == .error(21, id: 5))

        // A finished input keeps contributing its last state.
        a.continuation.finish()
        b.continuation.yield(.completed(content: 30, next: .loading, prev: .noMoreData))
        #expect(await output.next()?.picture == .completed(31, next: .loading, prev: .fixed(canRequest: false)))

        b.continuation.finish()
        #expect(await output.next() == nil)
    }

    @Test(.timeLimit(.minutes(1)))
    func threeWayEmitsTheZipOfTheLatestStatesUntilAllInputsFinish() async {
        let (_, reporter) = AsyncStream.makeStream(of: Termination.self)
        let a = Input<String>("a", reportingTo: reporter)
        let b = Input<Int>("b", reportingTo: reporter)
        let c = Input<Bool>("c", reportingTo: reporter)
        var output = a.stream.combineState(b.stream, c.stream) { "\($0)-\($1)-\($2)" }.makeAsyncIterator()

        a.continuation.yield(.completed("x"))
        b.continuation.yield(.completed(1))
        c.continuation.yield(.loading(content: true))
        #expect(await output.next()?.picture == .loading("x-1-true"))

        c.continuation.yield(.completed(false))
        #expect(await output.next()?.picture == .completed("x-1-false"))

        a.continuation.finish()
        c.continuation.finish()
        b.continuation.yield(.error(content: nil, rawError: StateTestError(id: 4)))
        #expect(await output.next()?.picture == .error(nil, id: 4))

        b.continuation.finish()
        #expect(await output.next() == nil)
    }

    @Test(.timeLimit(.minutes(1)))
    func aSlowConsumerReadsOnlyTheLatestCombination() async {
        let (_, reporter) = AsyncStream.makeStream(of: Termination.self)
        let a = Input<Int>("a", reportingTo: reporter)
        let b = Input<Int>("b", reportingTo: reporter)
        // The transform reports every combination it computes, so the test knows how far the
        // combination got without reading its output.
        let (computed, computedContinuation) = AsyncStream.makeStream(of: Int.self)
        let combined = a.stream.combineState(b.stream) { lhs, rhs in
            computedContinuation.yield(lhs + rhs)
            return lhs + rhs
        }
        var computedIterator = computed.makeAsyncIterator()

        a.continuation.yield(.completed(1))
        b.continuation.yield(.completed(10))
        #expect(await computedIterator.next() == 11)
        a.continuation.yield(.completed(2))
        #expect(await computedIterator.next() == 12)
        b.continuation.yield(.completed(20))
        #expect(await computedIterator.next() == 22)
        a.continuation.yield(.completed(3))
        // 22 was yielded to the output before 23 was computed; 23 follows it.
        #expect(await computedIterator.next() == 23)
        a.continuation.finish()
        b.continuation.finish()

        let read = await Self.collect(combined).compactMap(\.content)
        #expect(read.last == 23)
        #expect(read == [23] || read == [22, 23], "read \(read)")
    }

    @Test(.timeLimit(.minutes(1)))
    func cancellingTheConsumerCancelsEveryInputAtOnce() async {
        let (terminations, reporter) = AsyncStream.makeStream(of: Termination.self)
        let a = Input<Int>("a", reportingTo: reporter)
        let b = Input<Int>("b", reportingTo: reporter)
        let combined = a.stream.combineState(b.stream) { $0 + $1 }
        let (received, receivedContinuation) = AsyncStream.makeStream(of: Int?.self)
        let consumer = Task {
            for await state in combined { receivedContinuation.yield(state.content) }
            receivedContinuation.finish()
        }
        a.continuation.yield(.completed(1))
        b.continuation.yield(.completed(10))
        var receivedIterator = received.makeAsyncIterator()
        #expect(await receivedIterator.next() == 11)

        consumer.cancel()

        // The inputs never finish, so only cancellation can terminate them.
        #expect(await Self.first(2, of: terminations) == Self.cancelled("a", "b"))
        await consumer.value
        #expect(await receivedIterator.next() == nil)
    }

    @Test(.timeLimit(.minutes(1)))
    func leavingTheLoopAndDroppingTheStreamCancelsEveryInput() async {
        let (terminations, reporter) = AsyncStream.makeStream(of: Termination.self)
        let a = Input<Int>("a", reportingTo: reporter)
        let b = Input<Int>("b", reportingTo: reporter)
        let c = Input<Int>("c", reportingTo: reporter)
        a.continuation.yield(.completed(1))
        b.continuation.yield(.loading(content: nil))
        c.continuation.yield(.completed(100))

        let first = await Self.firstElement(of: a.stream.combineState(b.stream, c.stream) { $0 + $1 + $2 })

        #expect(first?.picture == .loading(nil))
        #expect(await Self.first(3, of: terminations) == Self.cancelled("a", "b", "c"))
    }

    // MARK: Helpers

    /// Reads `stream` to its end.
    private static func collect<Element>(_ stream: AsyncStream<Element>) async -> [Element] {
        var elements: [Element] = []
        for await element in stream { elements.append(element) }
        return elements
    }

    /// Reads the first element of `stream`, then leaves the loop; the caller's stream is dropped on return.
    private static func firstElement<Element>(of stream: AsyncStream<Element>) async -> Element? {
        for await element in stream { return element }
        return nil
    }

    /// The terminations of the named inputs by cancellation.
    private static func cancelled(_ names: String...) -> Set<Termination> {
        Set(names.map { Termination(name: $0, cancelled: true) })
    }

    /// Waits for the first `count` terminations, as a set: inputs may terminate in any order.
    private static func first(_ count: Int, of terminations: AsyncStream<Termination>) async -> Set<Termination> {
        var seen: Set<Termination> = []
        for await termination in terminations {
            seen.insert(termination)
            if seen.count == count { break }
        }
        return seen
    }
}
