/// The engine behind `combineState`: runs several input streams at once, folds what they emit into
/// one value, and publishes a result computed from the latest fold.
///
/// One unstructured task owns the whole combination. Inside it a task group runs one child per input;
/// each child iterates its input and sends what it sees, as ``CombineLatestEvent``s, over an internal
/// unbounded stream to the group's body. The body alone holds the folded value (`partial`), so no lock
/// is needed: it applies each update, asks `combine` for a result, and yields any result to the
/// output stream, whose `.bufferingNewest(1)` policy conflates results a slow consumer has not read.
///
/// Termination:
/// - When every input has finished, the body leaves its loop, and the output finishes after the last
///   result.
/// - When the consumer terminates the output (cancels its iterating task, or drops the stream), the
///   output's `onTermination` cancels the task; cancellation reaches the children at once, so each
///   input's iteration ends and the input's own `onTermination` fires with `.cancelled`.
enum CombineLatest {
    /// Starts the combination and returns its output stream.
    ///
    /// - Parameters:
    ///   - initial: The folded value before any input has emitted.
    ///   - feeds: One closure per input; each iterates its input, sends an update per element, and
    ///     returns when the input finishes or its task is cancelled.
    ///   - combine: Computes the result from the folded value, or `nil` while it cannot yet (for
    ///     `combineState`, until every input has emitted once). It runs in the combination's task.
    /// - Returns: The conflating output stream.
    static func stream<Partial: Sendable, Output: Sendable>(
        initial: Partial,
        feeds: [@Sendable (AsyncStream<CombineLatestEvent<Partial>>.Continuation) async -> Void],
        combine: @escaping @Sendable (Partial) -> Output?
    ) -> AsyncStream<Output> {
        let (output, outputContinuation) = AsyncStream.makeStream(
            of: Output.self, bufferingPolicy: .bufferingNewest(1))
        let task = Task {
            let (events, eventsContinuation) = AsyncStream.makeStream(of: CombineLatestEvent<Partial>.self)
            await withTaskGroup(of: Void.self) { group in
                for feed in feeds {
                    group.addTask {
                        await feed(eventsContinuation)
                        eventsContinuation.yield(.finished)
                    }
                }
                var partial = initial
                var running = feeds.count
                // Ends early, without a `.finished` from every feed, only when the task is cancelled;
                // the group then cancels and awaits its children.
                for await event in events {
                    switch event {
                    case .update(let apply):
                        apply(&partial)
                        if let result = combine(partial) { outputContinuation.yield(result) }
                    case .finished:
                        running -= 1
                    }
                    if running == 0 { break }
                }
            }
            eventsContinuation.finish()
            outputContinuation.finish()
        }
        outputContinuation.onTermination = { _ in task.cancel() }
        return output
    }
}

/// What one input of a ``CombineLatest`` sends to the task that folds the inputs.
enum CombineLatestEvent<Partial>: Sendable {
    /// The input emitted; the closure writes its element into the folded value.
    case update(@Sendable (inout Partial) -> Void)
    /// The input finished (or its iteration was cancelled) and will send nothing more.
    case finished
}
