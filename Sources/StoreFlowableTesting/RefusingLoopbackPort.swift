#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A port of 127.0.0.1 where connections are refused, for testing how network code reports a server
/// that is not there.
///
/// It holds a TCP socket bound to a free port and not listening, so the port stays reserved (no other
/// program gets it) while the kernel refuses every connection to it. The socket is closed when the
/// value is released; keep it alive for as long as the test connects.
///
/// ```swift
/// let closed = try RefusingLoopbackPort()
/// let url = URL(string: "http://127.0.0.1:\(closed.port)/users/1")
/// ```
public final class RefusingLoopbackPort: Sendable {
    /// Why the socket could not be made.
    public struct SocketError: Error, Sendable {
        /// The system call that failed.
        public let call: String
        /// Its `errno`.
        public let code: Int32
    }

    private let descriptor: Int32
    /// The port, on 127.0.0.1.
    public let port: Int

    /// Binds a socket to a free port of 127.0.0.1, without listening.
    ///
    /// - Throws: ``SocketError`` when the system refuses a socket or a port.
    public init() throws {
        (descriptor, port) = try Self.boundSocket(listening: false)
    }

    /// A TCP socket bound to a free port of 127.0.0.1, listening (with a backlog of 8) when `listening`;
    /// shared with the package's loopback test server.
    ///
    /// - Parameter listening: Whether the socket listens for connections.
    /// - Returns: The socket's descriptor (the caller closes it) and its port.
    /// - Throws: ``SocketError`` naming the system call that failed.
    package static func boundSocket(listening: Bool) throws -> (descriptor: Int32, port: Int) {
        #if canImport(Darwin)
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #else
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else { throw SocketError(call: "socket", code: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let failedCall = withUnsafeMutablePointer(to: &address) { pointer -> String? in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address -> String? in
                guard bind(descriptor, address, length) == 0 else { return "bind" }
                guard getsockname(descriptor, address, &length) == 0 else { return "getsockname" }
                guard !listening || listen(descriptor, 8) == 0 else { return "listen" }
                return nil
            }
        }
        if let failedCall {
            let code = errno
            close(descriptor)
            throw SocketError(call: failedCall, code: code)
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    deinit {
        close(descriptor)
    }
}
