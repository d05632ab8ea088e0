/// The 64-bit FNV-1a hash: names entry files after their encoded key and checksums their contents.
///
/// It is a fixed function of the bytes, the same in every process, version and platform (unlike
/// `hashValue`, which is seeded per process), so a file written by one process is found by another.
/// It is not cryptographic: keys chosen to collide only cost misses, since every file also holds its
/// full key.
enum FNV1a {
    /// The hash of no bytes.
    static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    /// The 64-bit FNV prime.
    static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// The hash of `bytes`, continuing from `state` (the hash of the bytes before them).
    ///
    /// - Parameters:
    ///   - bytes: The bytes to hash.
    ///   - state: The hash so far; ``offsetBasis`` to start.
    /// - Returns: The hash.
    static func hash(_ bytes: UnsafeRawBufferPointer, continuing state: UInt64 = offsetBasis) -> UInt64 {
        // A plain pointer walk: the same speed as a `for` loop when optimised, and much faster in the
        // unoptimised debug builds that run the tests.
        bytes.withMemoryRebound(to: UInt8.self) { bytes in
            guard var byte = bytes.baseAddress else { return state }
            let end = byte + bytes.count
            var hash = state
            while byte < end {
                hash = (hash ^ UInt64(byte.pointee)) &* prime
                byte += 1
            }
            return hash
        }
    }

    /// The hash of a byte collection.
    ///
    /// - Parameter bytes: The bytes to hash.
    /// - Returns: The hash.
    static func hash(of bytes: some Collection<UInt8>) -> UInt64 {
        if let hash = bytes.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) {
            return hash
        }
        return Array(bytes).withUnsafeBytes { hash($0) }
    }
}
