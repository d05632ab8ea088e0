import ArgumentParser
import CatalogModel
import CatalogUpstream
import Foundation
import Hummingbird
import Logging

/// `catalog-upstream`: the catalogue example's upstream product API, on its own.
///
/// Once listening it prints `listening on http://HOST:PORT` to standard output, and stops gracefully
/// on SIGTERM or SIGINT.
@main
struct CatalogUpstreamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog-upstream",
        abstract: "A product API with configurable latency, error rate and outage (the catalogue example's upstream).",
        discussion: """
            Serves products 1...N generated from their id. Change the faults at run time with PUT /control \
            and read the counts with GET /stats. Prints 'listening on http://HOST:PORT' once listening; \
            stops gracefully on SIGTERM or SIGINT.
            """)

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0: the system picks one).")
    var port = 0

    @Option(help: "How many products the catalogue holds (ids 1...N).")
    var products = CatalogUpstream.defaultProductCount

    @Option(name: .customLong("latency-ms"), help: "How long every product request waits, in milliseconds.")
    var latencyMilliseconds = 20

    @Option(name: .customLong("error-rate"), help: "The share of product requests failed with 503, 0 to 1.")
    var errorRate = 0.0

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        guard products >= 0 else { throw ValidationError("--products must be 0 or more") }
        guard latencyMilliseconds >= 0 else { throw ValidationError("--latency-ms must be 0 or more") }
        guard (0...1).contains(errorRate) else { throw ValidationError("--error-rate must be from 0 to 1") }
    }

    func run() async throws {
        var logger = Logger(label: "catalog-upstream")
        logger.logLevel = .info
        let upstream = CatalogUpstream(
            productCount: products,
            control: UpstreamControl(latencyMilliseconds: latencyMilliseconds, errorRate: errorRate))
        let host = host
        let app = upstream.application(host: host, port: port, logger: logger) { port in
            // Unbuffered: whoever started the process reads the line at once.
            FileHandle.standardOutput.write(Data("listening on http://\(host):\(port)\n".utf8))
        }
        try await app.runService()
    }
}
