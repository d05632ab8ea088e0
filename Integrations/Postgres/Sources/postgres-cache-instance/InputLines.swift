import Foundation

/// The lines of standard input, read by a thread of their own so that the blocking reads never hold a
/// thread of Swift's cooperative pool.
enum InputLines {
    /// Starts the reading thread.
    ///
    /// - Returns: Each line without its newline, in order; the stream finishes at the end of input.
    static func start() -> AsyncStream<String> {
        let (lines, continuation) = AsyncStream<String>.makeStream()
        let reader = Thread {
            while let line = readLine(strippingNewline: true) { continuation.yield(line) }
            continuation.finish()
        }
        reader.name = "stdin"
        reader.start()
        return lines
    }
}
