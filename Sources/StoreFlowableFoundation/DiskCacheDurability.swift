/// How far a ``DiskCache`` write goes before it returns: what survives a crash of the process, and
/// what survives a power loss.
///
/// Every write is atomic either way: the entry is written to a temporary file in the cache's folder,
/// which is then renamed over the entry's file. Readers, in this process or another, see the old
/// entry or the new one, never a part of one.
public enum DiskCacheDurability: Sendable, Hashable, CustomStringConvertible {
    /// Temporary file and rename, no flush (the default). A write that returned survives a crash or
    /// kill of the process. After a power loss or a kernel crash the file system may have lost the
    /// latest writes, or (on some file systems) left an empty or partial file: the cache detects such
    /// a file by its checksum, reports it, deletes it and treats it as a miss.
    case atomic

    /// Also flushes the temporary file to the storage device before the rename (`fsync`, and
    /// `F_FULLFSYNC` on Apple platforms) and the folder after it, and the folder after each removal.
    /// A write or removal that returned survives a power loss. Each write costs two flushes.
    case durable

    /// The case's name, as written in Swift.
    public var description: String {
        switch self {
        case .atomic: "atomic"
        case .durable: "durable"
        }
    }
}
