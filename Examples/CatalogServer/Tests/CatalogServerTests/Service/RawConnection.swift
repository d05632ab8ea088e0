#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP connection to a port of 127.0.0.1 made with the system's sockets, for what an HTTP client does
/// not do: send half a body and close, or never read the answer.
///
/// Its calls block, which on loopback with a few hundred bytes to send is immediate. It is closed by
/// ``close()`` or when it is released.
final class RawConnection {
    /// Why a socket call failed.
    struct Failed: Error, CustomStringConvertible {
        /// The call.
        let call: String
        /// Its `errno`.
        let code: Int32

        var description: String { "\(call) failed: errno \(code)" }
    }

    /// The socket, or -1 once closed.
    private var descriptor: Int32
    /// The port of its own end, which the server sees as the peer's.
    let localPort: Int

    /// Connects to `127.0.0.1:port`.
    ///
    /// - Parameters:
    ///   - port: The server's port.
    ///   - receiveBufferSize: `SO_RCVBUF` before connecting, when given: a small one makes the window the
    ///     connection advertises close after a few kilobytes the client does not read.
    /// - Throws: ``Failed``.
    init(port: Int, receiveBufferSize: Int32? = nil) throws {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failed(call: "socket", code: errno) }
        self.descriptor = descriptor
        if var size = receiveBufferSize {
            guard setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) == 0
            else {
                let code = errno
                closeSocket(descriptor)
                throw Failed(call: "setsockopt(SO_RCVBUF)", code: code)
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            closeSocket(descriptor)
            throw Failed(call: "connect", code: code)
        }
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &local) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else {
            let code = errno
            closeSocket(descriptor)
            throw Failed(call: "getsockname", code: code)
        }
        localPort = Int(UInt16(bigEndian: local.sin_port))
    }

    deinit {
        close()
    }

    /// Sends all of `text`.
    ///
    /// - Parameter text: What to send, as UTF-8.
    /// - Throws: ``Failed``.
    func send(_ text: String) throws {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { buffer in
                #if canImport(Glibc)
                    Glibc.send(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
                #else
                    Darwin.send(descriptor, buffer.baseAddress, buffer.count, 0)
                #endif
            }
            guard sent > 0 else { throw Failed(call: "send", code: errno) }
            bytes = bytes.dropFirst(sent)
        }
    }

    /// Resets the connection (an RST: `SO_LINGER` of 0, then close), as a client whose process was killed
    /// with data unread, or a middlebox that gave up on it, does.
    func reset() {
        guard descriptor >= 0 else { return }
        var linger = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        close()
    }

    /// Closes the connection the ordinary way (a FIN), as a client that goes away does.
    func close() {
        guard descriptor >= 0 else { return }
        closeSocket(descriptor)
        descriptor = -1
    }
}

/// `close(2)`, whose name the class's own `close()` hides.
///
/// - Parameter descriptor: The descriptor to close.
private func closeSocket(_ descriptor: Int32) {
    #if canImport(Glibc)
        _ = Glibc.close(descriptor)
    #else
        _ = Darwin.close(descriptor)
    #endif
}
