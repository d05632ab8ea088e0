import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Serialises writes to standard output, so that the lines of concurrent commands never interleave.
private let outputTurn = Mutex(())

/// Writes `line` and a newline to standard output at once (no buffering: the test reads each line as
/// it is written), as one line even when other tasks write at the same time.
///
/// The line is written whole under a lock, in one `write` unless the pipe takes only part of it; a
/// failing write (the reader went away) drops the rest of the line.
///
/// - Parameter line: The text; newlines in it are replaced by spaces, so that it stays one line.
func say(_ line: String) {
    var text = String(line.map { $0.isNewline ? " " : $0 }) + "\n"
    text.withUTF8 { bytes in
        outputTurn.withLock { _ in
            var offset = 0
            while offset < bytes.count {
                let written = write(1, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
