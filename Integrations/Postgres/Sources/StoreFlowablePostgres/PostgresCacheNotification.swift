#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The text of the notifications that a ``PostgresCache`` sends on its channel with `pg_notify` when
/// one of its writes commits, and its reading on the listening side.
///
/// A payload is five fields separated by single spaces:
///
/// ```text
/// sf1 <instance id> <operation> <target> <version>
/// sf1 4c1d…e0 set k:MQ== 1234          one key: its encoded bytes in base64
/// sf1 4c1d…e0 remove h:8d7f03e1a2b4c5d6 1240    one long key: the FNV-1a hash of its bytes, hex
/// sf1 4c1d…e0 remove * 0                every key
/// ```
///
/// - `sf1`: the format and its version.
/// - The instance id of the sending cache object (``PostgresCache/instanceID``), so that a listener
///   skips its own cache's writes; letters, digits, `.`, `_` and `-` only, so it holds no space.
/// - The operation: `set`, `remove` or `invalidate`; informative, listeners treat them alike.
/// - The target: `k:` and the key's encoded bytes in base64 (standard alphabet, padded); `h:` and 16
///   lower-case hex digits of the 64-bit FNV-1a hash of those bytes when the payload would be longer
///   than ``maximumLength`` (PostgreSQL refuses payloads of 8000 bytes or more); `*` for every key.
/// - The version: the `seq` of the row the write stored, marked or deleted, in decimal; `0` for `*`.
///
/// Everything but the version is known before the statement runs, so the cache binds it as one text
/// (``prefix(instanceID:operation:target:)``) and the statement appends the row's `seq` to it.
enum PostgresCacheNotification {
    /// The first field: the payload format and its version.
    static let formatTag = "sf1"
    /// The longest payload sent with a key in base64, in bytes; longer ones carry the key's hash. Below
    /// PostgreSQL's limit of 8000 bytes with room for the version.
    static let maximumLength = 7_000
    /// The most keys that ``PostgresCache/invalidateEntries(where:)`` announces one by one; it announces
    /// more as one notification for every key.
    static let keyNotificationLimit = 100
    /// The most digits of a version: an `Int64` in decimal, with a sign.
    private static let versionDigits = 20

    /// What a notification announces, before its key is decoded.
    enum Target: Equatable {
        /// The key with these encoded bytes.
        case key(Data)
        /// The key whose encoded bytes have this FNV-1a hash.
        case keyHash(UInt64)
        /// Every key.
        case all
    }

    /// A payload, read.
    struct Message: Equatable {
        /// The instance id of the cache object that sent it.
        var instanceID: String
        /// The operation named in it.
        var operation: String
        /// The key, its hash, or every key.
        var target: Target
        /// The row's `seq`; 0 for every key.
        var version: Int64
    }

    /// Why a payload could not be read.
    struct Malformed: Error, Equatable {
        /// What is wrong with it.
        var reason: String
    }

    /// The operations a payload may name.
    static let operations: Set<String> = ["set", "remove", "invalidate"]

    /// The payload up to its version, with the trailing space: the part the cache binds.
    ///
    /// - Parameters:
    ///   - instanceID: The sending cache's instance id.
    ///   - operation: `set`, `remove` or `invalidate`.
    ///   - target: The encoded key (sent as base64, or as its hash when too long), or `nil` for every key.
    /// - Returns: The text to which the statement appends the row's `seq` (or `0`).
    static func prefix(instanceID: String, operation: String, target keyBytes: Data?) -> String {
        let head = "\(formatTag) \(instanceID) \(operation) "
        guard let keyBytes else { return head + "* " }
        let encoded = head + "k:" + keyBytes.base64EncodedString() + " "
        if encoded.utf8.count + versionDigits <= maximumLength { return encoded }
        return head + "h:" + hex(fnv1a(keyBytes)) + " "
    }

    /// Reads a payload.
    ///
    /// - Parameter payload: The notification's text.
    /// - Returns: What it announces.
    /// - Throws: ``Malformed`` when it is not a payload of this format.
    static func parse(_ payload: String) throws(Malformed) -> Message {
        let fields = payload.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 5 else { throw Malformed(reason: "expected 5 fields, found \(fields.count)") }
        guard fields[0] == formatTag else { throw Malformed(reason: "unknown format \(String(reflecting: fields[0]))") }
        let instanceID = String(fields[1])
        guard isValidInstanceID(instanceID) else { throw Malformed(reason: "invalid instance id") }
        let operation = String(fields[2])
        guard operations.contains(operation) else {
            throw Malformed(reason: "unknown operation \(String(reflecting: operation))")
        }
        guard let version = Int64(fields[4]), version >= 0 else { throw Malformed(reason: "invalid version") }
        let target: Target
        let field = fields[3]
        if field == "*" {
            target = .all
        } else if field.hasPrefix("k:") {
            guard let bytes = Data(base64Encoded: String(field.dropFirst(2))) else {
                throw Malformed(reason: "the key is not base64")
            }
            target = .key(bytes)
        } else if field.hasPrefix("h:") {
            let digits = field.dropFirst(2)
            guard digits.count == 16, let hash = UInt64(digits, radix: 16) else {
                throw Malformed(reason: "the key hash is not 16 hex digits")
            }
            target = .keyHash(hash)
        } else {
            throw Malformed(reason: "unknown target")
        }
        return Message(instanceID: instanceID, operation: operation, target: target, version: version)
    }

    /// Whether `id` can be an instance id: 1 to 64 ASCII letters, digits, `.`, `_` or `-`.
    ///
    /// - Parameter id: A proposed instance id.
    /// - Returns: `true` when it is one.
    static func isValidInstanceID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        return !bytes.isEmpty && bytes.count <= 64
            && bytes.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
    }

    /// A new random instance id: 32 lower-case hex digits (128 bits from the system's generator).
    ///
    /// - Returns: The id.
    static func randomInstanceID() -> String {
        var generator = SystemRandomNumberGenerator()
        return hex(generator.next()) + hex(generator.next())
    }

    /// The 64-bit FNV-1a hash of `bytes`.
    ///
    /// - Parameter bytes: The bytes to hash.
    /// - Returns: The hash: offset basis 0xcbf29ce484222325, prime 0x100000001b3.
    static func fnv1a(_ bytes: Data) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// `value` as 16 lower-case hex digits.
    ///
    /// - Parameter value: A number.
    /// - Returns: Its digits, zero-padded.
    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
