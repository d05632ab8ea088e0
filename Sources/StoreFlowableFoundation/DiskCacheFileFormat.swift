import StoreFlowable

/// The layout of one entry file, format version 1. Integers are little-endian.
///
/// ```text
/// offset  size  field
///      0     4  magic "SFDC" (0x53 0x46 0x44 0x43)
///      4     4  format version: 1
///      8     8  checksum: FNV-1a 64 of every byte from offset 16 to the end of the file
///     16     8  storedAt: nanoseconds since 1970 (Int64), from the writer's CacheClock
///     24     4  flags: bit 0 = invalidated; the other bits are zero
///     28     4  key length K (UInt32)
///     32     8  value length V (UInt64)
///     40     K  the encoded key
///   40+K     V  the encoded value; the file ends here (its length is exactly 40 + K + V)
/// ```
///
/// The checksum covers the timestamp, flags, lengths, key and value, so a file cut short or with a bit
/// changed anywhere after the version is detected. The key is stored whole and compared on every read,
/// so a file name collision is a miss, never another key's value.
enum DiskCacheFileFormat {
    /// The first four bytes of every entry file.
    static let magic: [UInt8] = [0x53, 0x46, 0x44, 0x43]
    /// The format version this library reads and writes.
    static let version: UInt32 = 1
    /// The header's length: the key starts here.
    static let headerSize = 40
    /// Where the bytes covered by the checksum start.
    static let checksummedFrom = 16
    /// Flag bit 0: the entry was invalidated.
    static let invalidatedFlag: UInt32 = 1

    /// The bytes of an entry file.
    ///
    /// - Parameters:
    ///   - key: The encoded key.
    ///   - value: The encoded value.
    ///   - storedAt: When the entry was stored.
    ///   - isInvalidated: Whether it is marked invalidated.
    /// - Returns: The whole file.
    static func encode(
        key: some Collection<UInt8>, value: some Collection<UInt8>, storedAt: CacheTime, isInvalidated: Bool
    ) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerSize + key.count + value.count)
        bytes.append(contentsOf: magic)
        append(version, to: &bytes)
        append(UInt64(0), to: &bytes)  // the checksum, filled in below
        append(storedAt.nanosecondsSince1970, to: &bytes)
        append(isInvalidated ? invalidatedFlag : 0, to: &bytes)
        append(UInt32(key.count), to: &bytes)
        append(UInt64(value.count), to: &bytes)
        bytes.append(contentsOf: key)
        bytes.append(contentsOf: value)
        sealChecksum(&bytes)
        return bytes
    }

    /// The same file, marked invalidated, with its checksum recomputed.
    ///
    /// - Parameter bytes: A file that ``parse(_:)`` accepted.
    /// - Returns: The file with the invalidated flag set.
    static func markingInvalidated(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        let flags = load(UInt32.self, from: bytes, at: 24) | invalidatedFlag
        store(flags, in: &bytes, at: 24)
        sealChecksum(&bytes)
        return bytes
    }

    /// Checks a whole file and locates its parts.
    ///
    /// - Parameter bytes: The file's contents.
    /// - Returns: Its record, or what is wrong with it.
    static func parse(_ bytes: [UInt8]) -> ParsedEntryFile {
        let magicMatches = bytes.count >= magic.count && bytes[0..<magic.count].elementsEqual(magic)
        guard bytes.count >= headerSize else {
            return .damaged(bytes.count >= magic.count && !magicMatches ? .notACacheFile : .truncated)
        }
        guard magicMatches else { return .damaged(.notACacheFile) }
        let fileVersion = load(UInt32.self, from: bytes, at: 4)
        guard fileVersion == version else { return .damaged(.unsupportedVersion(fileVersion)) }
        let keyLength = Int(load(UInt32.self, from: bytes, at: 28))
        let valueLength = load(UInt64.self, from: bytes, at: 32)
        guard let valueCount = Int(exactly: valueLength), valueCount <= bytes.count else {
            return .damaged(.truncated)
        }
        let expected = headerSize + keyLength + valueCount
        guard expected <= bytes.count else { return .damaged(.truncated) }
        guard expected == bytes.count else { return .damaged(.malformedHeader) }
        let stored = load(UInt64.self, from: bytes, at: 8)
        guard stored == checksum(of: bytes) else { return .damaged(.checksumMismatch) }
        let flags = load(UInt32.self, from: bytes, at: 24)
        guard flags & ~invalidatedFlag == 0 else { return .damaged(.malformedHeader) }
        return .intact(
            DiskCacheRecord(
                storedAt: CacheTime(nanosecondsSince1970: load(Int64.self, from: bytes, at: 16)),
                isInvalidated: flags & invalidatedFlag != 0,
                keyRange: headerSize..<(headerSize + keyLength),
                valueRange: (headerSize + keyLength)..<expected
            ))
    }

    /// The checksum of a file: FNV-1a 64 of the bytes from ``checksummedFrom`` on.
    private static func checksum(of bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { FNV1a.hash(UnsafeRawBufferPointer(rebasing: $0[checksummedFrom...])) }
    }

    /// Writes the checksum of `bytes` into its header.
    private static func sealChecksum(_ bytes: inout [UInt8]) {
        store(checksum(of: bytes), in: &bytes, at: 8)
    }

    /// Appends `value` in little-endian order.
    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Overwrites the bytes at `offset` with `value` in little-endian order.
    private static func store<T: FixedWidthInteger>(_ value: T, in bytes: inout [UInt8], at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { source in
            bytes.withUnsafeMutableBytes { $0[offset..<(offset + source.count)].copyBytes(from: source) }
        }
    }

    /// Reads a little-endian integer at `offset`; the caller checked that the bytes are there.
    private static func load<T: FixedWidthInteger>(_: T.Type, from bytes: [UInt8], at offset: Int) -> T {
        bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }
}

/// What ``DiskCacheFileFormat/parse(_:)`` found.
enum ParsedEntryFile {
    /// The file is intact; its parts are here.
    case intact(DiskCacheRecord)
    /// The file is damaged.
    case damaged(DiskCacheFileProblem)
}

/// Where the parts of an entry file are, once ``DiskCacheFileFormat/parse(_:)`` checked it.
struct DiskCacheRecord: Sendable {
    /// When the entry was stored.
    var storedAt: CacheTime
    /// Whether it was invalidated.
    var isInvalidated: Bool
    /// The encoded key's bytes in the file.
    var keyRange: Range<Int>
    /// The encoded value's bytes in the file.
    var valueRange: Range<Int>
}
