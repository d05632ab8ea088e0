import HummingbirdCore
import Logging
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Hummingbird's HTTP/1 connections, each with TCP options that bound how long a client that vanished
/// without closing (a cut cable, a host switched off, a NAT that forgot the connection: no FIN, no RST)
/// keeps its connection, and with it an `/events` stream, its store subscription and its memory.
///
/// Without them the kernel finds such a peer only when data it sent stays unacknowledged through every
/// retransmission (`tcp_retries2`: about 15 minutes on Linux), and an idle connection never. With a
/// timeout `T` (``CatalogConfiguration/deadPeerTimeout``), each accepted socket gets:
/// - `TCP_USER_TIMEOUT` of `T` (Linux; `TCP_RXT_CONNDROPTIME` on Darwin): data left unacknowledged
///   for `T` drops the connection. An `/events` stream sends a heartbeat at least every
///   ``CatalogConfiguration/eventHeartbeat``, so its vanished client is dropped within about the
///   heartbeat plus `T`. On Linux 5.11 and later the same holds for a client whose receive window stays
///   shut for `T` (one that reads nothing while data waits for it).
/// - `SO_KEEPALIVE`, with probes from `T/2` of silence every `T/6`, 3 of them: a connection on which
///   nothing is sent (a `PUT` whose body stopped coming, an idle keep-alive connection) is dropped after
///   about `T` of unanswered silence. Probes are answered by a live peer's kernel, so a slow but present
///   client is not affected.
///
/// The drop fails the connection's reads and writes with `ETIMEDOUT`: the `/events` stream ends as if
/// the client had left, and a body being read is ``CatalogError/clientAborted(_:)``.
///
/// Hummingbird 2 exposes no child channel options, but lets the server's child channel be built
/// (`HTTPServerBuilder`): this one sets the options, then hands the connection to `HTTP1Channel`.
struct DeadPeerTimeoutChannel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    /// The HTTP/1 channel that serves the connection.
    let base: HTTP1Channel
    /// The timeout `T`.
    let timeout: Duration

    /// A server builder whose connections are `HTTP1Channel`s with the options of `timeout`.
    ///
    /// - Parameter timeout: The timeout `T`, 1 second or more.
    /// - Returns: The builder, for an `Application`.
    static func http1(timeout: Duration) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            DeadPeerTimeoutChannel(base: HTTP1Channel(responder: responder), timeout: timeout)
        }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try setOptions(on: channel)
        } catch {
            // The connection is still served, only without the bound.
            logger.warning(
                "could not bound how long a vanished client keeps its connection", metadata: ["error": "\(error)"])
        }
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }

    /// Sets the options on `channel`, from its event loop (where Hummingbird sets a connection up).
    ///
    /// - Parameter channel: The accepted connection.
    /// - Throws: What setting an option throws; `ChannelError.operationUnsupported` when the channel has
    ///   no synchronous options.
    /// The longest timeout set, in seconds: `TCP_USER_TIMEOUT` takes milliseconds in a 32-bit int (NIO's
    /// `SocketOptionValue` is 64 bits wide on Linux, so its own maximum is no bound).
    static let maximumSeconds = SocketOptionValue(Int32.max / 1000)
    /// The longest keepalive idle time or interval Linux accepts, in seconds (`MAX_TCP_KEEPIDLE`,
    /// `MAX_TCP_KEEPINTVL`).
    static let maximumKeepaliveSeconds: SocketOptionValue = 32_767

    private func setOptions(on channel: any Channel) throws {
        guard let options = channel.syncOptions else { throw ChannelError.operationUnsupported }
        // At least 1 second; at most what `TCP_USER_TIMEOUT` holds in milliseconds (a 32-bit int, about
        // 24 days), so that `seconds * 1000` cannot overflow.
        let seconds = min(max(1, SocketOptionValue(clamping: timeout.components.seconds)), Self.maximumSeconds)
        // Linux refuses a keepalive idle time or interval over 32,767 seconds (EINVAL), which would fail
        // every connection's set-up.
        let idle = min(max(1, seconds / 2), Self.maximumKeepaliveSeconds)
        let interval = min(max(1, seconds / 6), Self.maximumKeepaliveSeconds)
        let tcp = SocketOptionLevel(IPPROTO_TCP)
        try options.setOption(ChannelOptions.socketOption(.so_keepalive), value: 1)
        #if os(Linux)
            try options.setOption(ChannelOptions.socket(tcp, TCP_KEEPIDLE), value: idle)
            try options.setOption(ChannelOptions.socket(tcp, TCP_KEEPINTVL), value: interval)
            try options.setOption(ChannelOptions.socket(tcp, TCP_KEEPCNT), value: 3)
            try options.setOption(
                ChannelOptions.socket(tcp, SocketOptionName(TCP_USER_TIMEOUT)),
                value: seconds * 1000)
        #elseif canImport(Darwin)
            try options.setOption(ChannelOptions.socket(tcp, TCP_KEEPALIVE), value: idle)
            try options.setOption(ChannelOptions.socket(tcp, TCP_KEEPINTVL), value: interval)
            try options.setOption(ChannelOptions.socket(tcp, TCP_KEEPCNT), value: 3)
            try options.setOption(ChannelOptions.socket(tcp, TCP_RXT_CONNDROPTIME), value: seconds)
        #endif
    }
}
