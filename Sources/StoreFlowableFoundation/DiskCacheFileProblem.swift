/// What is wrong with a file in a ``DiskCache``'s folder: the reason it was deleted and treated as a
/// miss, reported in ``DiskCacheEvent/removedDamagedFile(path:problem:)``.
public enum DiskCacheFileProblem: Sendable, Hashable, CustomStringConvertible {
    /// The file is shorter than its header says (a write cut short by a power loss, or an empty file).
    case truncated
    /// The file does not start with the cache's magic bytes: it is not an entry file.
    case notACacheFile
    /// The file was written in another format version (by an older or newer library).
    case unsupportedVersion(UInt32)
    /// The header is inconsistent: bytes after the value, or unknown flags.
    case malformedHeader
    /// The checksum does not match the contents: bits changed on disk.
    case checksumMismatch
    /// The file is intact but holds another key (two keys whose hashes collide, or a file copied or
    /// renamed from outside). Never served for the key asked for.
    case keyMismatch
    /// The stored key could not be decoded by the coder; `reason` is its error.
    case undecodableKey(reason: String)
    /// The stored value could not be decoded by the coder (for example after its type changed);
    /// `reason` is its error.
    case undecodableValue(reason: String)

    /// The problem in a few words, for logs.
    public var description: String {
        switch self {
        case .truncated: "truncated"
        case .notACacheFile: "not a cache file"
        case .unsupportedVersion(let version): "unsupported format version \(version)"
        case .malformedHeader: "malformed header"
        case .checksumMismatch: "checksum mismatch"
        case .keyMismatch: "holds another key"
        case .undecodableKey(let reason): "undecodable key: \(reason)"
        case .undecodableValue(let reason): "undecodable value: \(reason)"
        }
    }
}
