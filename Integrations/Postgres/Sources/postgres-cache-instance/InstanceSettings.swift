/// What one `postgres-cache-instance` process connects to and how it behaves, from its arguments:
///
///     postgres-cache-instance --host H --port P --user U --database D --cache NAME --instance NAME
///                             [--delay-ms N] [--timeout-ms N] [--lease-ms N]
///
/// `--delay-ms` is how long the origin takes after recording a call (0 by default); `--timeout-ms`
/// bounds each cache operation, each origin statement and the connect (2000 by default); `--lease-ms` is
/// the lease of the instance's `PostgresSingleFlight` claims (10000 by default).
struct InstanceSettings: Sendable {
    var host = ""
    var port = 0
    var user = ""
    var database = ""
    /// The `PostgresCache` name every instance of a test shares.
    var cache = ""
    /// This instance's name, recorded with each origin call and part of each fetched value.
    var instance = ""
    /// How long an origin call takes after recording itself.
    var delay = Duration.zero
    /// The longest wait for one database operation.
    var timeout = Duration.milliseconds(2_000)
    /// The lease of a fetch claim.
    var lease = Duration.milliseconds(10_000)

    /// How to call the process.
    static let usage =
        "usage: postgres-cache-instance --host H --port P --user U --database D --cache NAME --instance NAME"
        + " [--delay-ms N] [--timeout-ms N] [--lease-ms N]"

    /// Reads the settings from `arguments` (without the program's name).
    ///
    /// - Parameter arguments: `--name value` pairs.
    /// - Returns: The settings, or `nil` when an option is unknown, repeated without a value, not a
    ///   number where one is needed, or a required one is missing.
    static func parse(_ arguments: [String]) -> InstanceSettings? {
        var settings = InstanceSettings()
        var remaining = arguments[...]
        while let option = remaining.popFirst() {
            guard let value = remaining.popFirst() else { return nil }
            switch option {
            case "--host": settings.host = value
            case "--port":
                guard let port = Int(value), (1...65_535).contains(port) else { return nil }
                settings.port = port
            case "--user": settings.user = value
            case "--database": settings.database = value
            case "--cache": settings.cache = value
            case "--instance": settings.instance = value
            case "--delay-ms":
                guard let milliseconds = Int(value), milliseconds >= 0 else { return nil }
                settings.delay = .milliseconds(milliseconds)
            case "--timeout-ms":
                guard let milliseconds = Int(value), milliseconds > 0 else { return nil }
                settings.timeout = .milliseconds(milliseconds)
            case "--lease-ms":
                guard let milliseconds = Int(value), milliseconds > 0 else { return nil }
                settings.lease = .milliseconds(milliseconds)
            default: return nil
            }
        }
        let required = [settings.host, settings.user, settings.database, settings.cache, settings.instance]
        guard settings.port > 0, !required.contains(where: \.isEmpty) else { return nil }
        return settings
    }
}
