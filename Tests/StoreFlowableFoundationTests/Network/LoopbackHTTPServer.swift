import Foundation
import StoreFlowable
import StoreFlowableTesting

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A minimal HTTP/1.1 server on 127.0.0.1 for the transport tests, over POSIX sockets only.
///
/// It serves each connection with the same canned ``Reply`` on a thread of its own (blocking socket calls
/// stay off the cooperative pool), one connection at a time, and reports what happened as ``Event``s.
/// It stops by itself: after `maxConnections` connections, after `lifetime`, or when the value is
/// released (or ``stop()`` is called), whichever comes first. Every wait inside it is a `poll` that also
/// watches a wake-up pipe, so stopping never waits for a client.
final class LoopbackHTTPServer: Sendable {
    /// What the server does with every connection, after reading the request's head.
    enum Reply: Sendable {
        /// Writes `head` and `body`, then closes the connection.
        case complete(head: String, body: [UInt8])
        /// Writes `head`, then waits until the client closes the connection.
        case headThenWait(head: String)
        /// Writes `head`, then body bytes without end until the client closes the connection.
        case headThenEndlessBody(head: String)
        /// Writes nothing; waits until the client closes the connection.
        case silence
    }

    /// What the server saw.
    enum Event: Sendable, Equatable {
        /// A request arrived; its request line, such as `GET /users/1 HTTP/1.1`.
        case request(String)
        /// The reply's head was written.
        case headSent
        /// The client closed the connection while the server waited or wrote; `bodyBytes` body bytes
        /// had been written.
        case clientLeft(bodyBytes: Int)
    }

    /// Why the server's wake-up pipe could not be made.
    struct SocketError: Error {
        let call: String
        let code: Int32
    }

    /// The port, on 127.0.0.1.
    let port: Int
    /// Every event, in order; finishes when the server stops.
    let events: AsyncStream<Event>
    private let wake: WakePipe

    /// Starts a server that answers every connection with `reply`.
    ///
    /// - Parameters:
    ///   - reply: What to answer.
    ///   - maxConnections: How many connections to serve before stopping.
    ///   - lifetime: How long to run at most, in seconds.
    /// - Throws: `RefusingLoopbackPort.SocketError` when a socket or a port cannot be had, ``SocketError``
    ///   when a pipe cannot.
    init(reply: Reply, maxConnections: Int = 4, lifetime: Double = 30) throws {
        let listener = try RefusingLoopbackPort.boundSocket(listening: true)
        let wake: WakePipe
        do {
            wake = try WakePipe()
        } catch {
            close(listener.descriptor)
            throw error
        }
        let (events, continuation) = AsyncStream<Event>.makeStream()
        self.port = listener.port
        self.events = events
        self.wake = wake
        let loop = ServeLoop(
            listener: listener.descriptor, wake: wake, reply: reply, events: continuation,
            deadline: Deadline(seconds: lifetime), maxConnections: maxConnections)
        let thread = Thread { loop.run() }
        thread.name = "LoopbackHTTPServer \(listener.port)"
        thread.start()
    }

    deinit {
        wake.signal()
    }

    /// Stops the server: it accepts no more connections and leaves the one it serves.
    func stop() {
        wake.signal()
    }

    /// Waits for the first event that `matches` accepts and returns it; `nil` when the server stopped
    /// first. Call it from one task at a time.
    func waitFor(_ matches: (Event) -> Bool) async -> Event? {
        for await event in events where matches(event) {
            return event
        }
        return nil
    }

    /// The head of a response: status line, `headers` in order (repeats allowed), `Connection: close`.
    static func head(status: Int, _ headers: [(String, String)] = []) -> String {
        var head = "HTTP/1.1 \(status) Status\r\n"
        for (name, value) in headers {
            head += "\(name): \(value)\r\n"
        }
        return head + "Connection: close\r\n\r\n"
    }
}

/// A pipe whose read end becomes readable once ``signal()`` is called: what every `poll` of the server
/// watches, so that stopping wakes it.
private final class WakePipe: Sendable {
    let readEnd: Int32
    private let writeEnd: Int32

    init() throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw LoopbackHTTPServer.SocketError(call: "pipe", code: errno) }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    /// Makes the read end readable; idempotent in effect (nothing ever reads the byte).
    func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }
}

/// A moment `seconds` from now, on the monotonic clock.
private struct Deadline: Sendable {
    private let end: ContinuousClock.Instant

    init(seconds: Double) {
        end = .now + .milliseconds(Int(seconds * 1_000))
    }

    /// The milliseconds left, at least 0: a `poll` timeout.
    var millisecondsLeft: Int32 {
        let left = ContinuousClock.now.duration(to: end).components
        return Int32(max(0, min(Int64(Int32.max), left.seconds * 1_000 + left.attoseconds / 1_000_000_000_000_000)))
    }
}

/// The server's thread: accepts connections and serves them one by one until it is told to stop, its
/// connections are used up or its deadline passes; then closes the listening socket and ends the events.
private final class ServeLoop: Sendable {
    private let listener: Int32
    private let wake: WakePipe
    private let reply: LoopbackHTTPServer.Reply
    private let events: AsyncStream<LoopbackHTTPServer.Event>.Continuation
    private let deadline: Deadline
    private let maxConnections: Int

    init(
        listener: Int32, wake: WakePipe, reply: LoopbackHTTPServer.Reply,
        events: AsyncStream<LoopbackHTTPServer.Event>.Continuation, deadline: Deadline, maxConnections: Int
    ) {
        self.listener = listener
        self.wake = wake
        self.reply = reply
        self.events = events
        self.deadline = deadline
        self.maxConnections = maxConnections
    }

    /// How a wait for a descriptor ended.
    private enum Readiness {
        case ready
        case stop
    }

    func run() {
        defer {
            close(listener)
            events.finish()
        }
        for _ in 0..<maxConnections {
            guard wait(for: listener, events: Int16(POLLIN)) == .ready else { return }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let goOn = serve(client)
            close(client)
            guard goOn else { return }
        }
    }

    /// Serves one connection; returns whether to go on with the next.
    private func serve(_ client: Int32) -> Bool {
        #if canImport(Darwin)
            var on: Int32 = 1
            setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        guard let requestLine = readRequestHead(client) else { return true }
        events.yield(.request(requestLine))
        switch reply {
        case .complete(let head, let body):
            // A client that leaves before the whole reply is written (a cancelled caller) is not a
            // reason to stop: only a stop request or the deadline is.
            guard sendAll(Array(head.utf8), to: client) != .stop else { return false }
            events.yield(.headSent)
            return sendAll(body, to: client) != .stop
        case .headThenWait(let head):
            guard sendAll(Array(head.utf8), to: client) == .sent else { return false }
            events.yield(.headSent)
            return waitForClientToLeave(client, bodyBytes: 0)
        case .headThenEndlessBody(let head):
            guard sendAll(Array(head.utf8), to: client) == .sent else { return false }
            events.yield(.headSent)
            return sendUntilClientLeaves(client)
        case .silence:
            return waitForClientToLeave(client, bodyBytes: 0)
        }
    }

    /// Reads up to the blank line ending the request's head and returns its first line; `nil` when the
    /// client left or sent more than 64 KiB of head.
    private func readRequestHead(_ client: Int32) -> String? {
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while !head.ends(with: end) {
            guard head.count < 64 * 1_024, wait(for: client, events: Int16(POLLIN)) == .ready else { return nil }
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return nil }
            head += buffer[..<count]
        }
        let text = String(decoding: head, as: UTF8.self)
        return text.split(separator: "\r\n", maxSplits: 1).first.map(String.init)
    }

    /// Waits until the client closes the connection (a read of 0 bytes or an error); returns whether to
    /// go on.
    private func waitForClientToLeave(_ client: Int32, bodyBytes: Int) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while wait(for: client, events: Int16(POLLIN)) == .ready {
            if read(client, &buffer, buffer.count) <= 0 {
                events.yield(.clientLeft(bodyBytes: bodyBytes))
                return true
            }
        }
        return false
    }

    /// Writes body bytes until a write fails (the client left), at most 8 GiB; returns whether to go on.
    private func sendUntilClientLeaves(_ client: Int32) -> Bool {
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1_024)
        var written = 0
        while written < 1 << 33 {
            guard wait(for: client, events: Int16(POLLOUT)) == .ready else { return false }
            let count = chunk.withUnsafeBytes { Self.sendNoSignal(client, $0) }
            guard count > 0 else {
                events.yield(.clientLeft(bodyBytes: written))
                return true
            }
            written += count
        }
        return false
    }

    /// How writing a reply ended.
    private enum Sending {
        case sent
        case clientLeft
        case stop
    }

    /// Writes all of `bytes`; `.stop` when the server must stop, `.clientLeft` when a write failed.
    private func sendAll(_ bytes: [UInt8], to client: Int32) -> Sending {
        var offset = 0
        while offset < bytes.count {
            guard wait(for: client, events: Int16(POLLOUT)) == .ready else { return .stop }
            let count = bytes[offset...].withUnsafeBytes { Self.sendNoSignal(client, $0) }
            guard count > 0 else { return .clientLeft }
            offset += count
        }
        return .sent
    }

    /// `send` that never raises `SIGPIPE` (on Darwin the socket option does that instead).
    private static func sendNoSignal(_ client: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        #if canImport(Darwin)
            let flags: Int32 = 0
        #else
            let flags = Int32(MSG_NOSIGNAL)
        #endif
        return send(client, bytes.baseAddress, bytes.count, flags)
    }

    /// Waits until `descriptor` is ready for `events`; `.stop` when the server is told to stop or its
    /// deadline passes first.
    private func wait(for descriptor: Int32, events: Int16) -> Readiness {
        var watched = [
            pollfd(fd: descriptor, events: events, revents: 0),
            pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let result = poll(&watched, nfds_t(watched.count), deadline.millisecondsLeft)
            if result < 0 && errno == EINTR { continue }
            guard result > 0, watched[1].revents == 0 else { return .stop }
            return .ready
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix)
    }
}
