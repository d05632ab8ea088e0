/// A one-time signal between tasks, without sleeping: `wait()` returns once `open()` was called (or
/// the waiting task is cancelled).
struct Signal: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() { (stream, continuation) = AsyncStream.makeStream() }

    /// Lets every current and later `wait()` return.
    func open() { continuation.finish() }

    /// Returns once `open()` was called, or the calling task is cancelled.
    func wait() async {
        for await _ in stream {}
    }
}
