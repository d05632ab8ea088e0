/// The origin's statement got no answer within the instance's timeout.
struct OriginTimedOut: Error, CustomStringConvertible {
    /// How long it waited.
    var after: Duration

    var description: String { "the origin's statement got no answer within \(after)" }
}

/// Runs `operation` in a task of its own and waits for it at most `timeout`.
///
/// postgres-nio queues a query while its pool retries connecting to a server that is down, so a
/// statement may not answer for a minute; this returns at the deadline instead, even if the operation
/// ignores its cancellation (it is cancelled and left to finish on its own). A task group could not
/// promise that: it waits for every child.
///
/// - Parameters:
///   - timeout: The longest wait.
///   - operation: The work.
/// - Returns: What `operation` returned.
/// - Throws: What `operation` threw, ``OriginTimedOut`` at the deadline, or `CancellationError` when the
///   caller is cancelled first.
func withTimeout<Value: Sendable>(
    _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    // The first of the two results wins; the stream buffers it until it is read.
    let (outcomes, continuation) = AsyncStream<Result<Value, any Error>>.makeStream()
    let work = Task {
        do {
            continuation.yield(.success(try await operation()))
        } catch {
            continuation.yield(.failure(error))
        }
    }
    let timer = Task {
        try await Task.sleep(for: timeout)
        continuation.yield(.failure(OriginTimedOut(after: timeout)))
    }
    defer {
        work.cancel()
        timer.cancel()
        continuation.finish()
    }
    for await outcome in outcomes { return try outcome.get() }
    throw CancellationError()
}
