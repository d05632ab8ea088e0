import Foundation

/// Runs `body` on a new thread of its own and returns what it returns, while the calling task waits
/// suspended.
///
/// For blocking calls that may take more than a few milliseconds: waiting for a child process, reading
/// its output, `poll`. Made on a thread of the cooperative pool, which has as many threads as the machine
/// has cores, such a call holds that thread for its whole duration; two at once on a 2-core machine stop
/// every task of the test process, and other tests' operations time out together.
///
/// - Parameter body: The blocking work; it runs to its end even if the calling task is cancelled.
/// - Returns: What `body` returns.
/// - Throws: What `body` throws.
func onThreadOfItsOwn<Value: Sendable, Failure: Error>(
    _ body: @escaping @Sendable () throws(Failure) -> Value
) async throws(Failure) -> Value {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, Failure>, Never>) in
        Thread.detachNewThread { continuation.resume(returning: Result(catching: body)) }
    }
    return try result.get()
}
