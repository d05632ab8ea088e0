#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Bionic)
    import Bionic
#endif

/// Why a ``DiskCache`` could not be created or could not write.
///
/// Reads never throw these for a file system problem: an unreadable folder or file is a miss, reported
/// to the cache's event handler as ``DiskCacheEvent/readFailed(path:code:)``. Writes throw them, and
/// leave the previous entry of the key as it was (no temporary file is left behind).
///
/// `code` is the `errno` value the system call returned (`ENOSPC`, `EACCES`, …); ``description`` spells
/// it out.
public enum DiskCacheError: Error, Sendable, CustomStringConvertible {
    /// The cache name is empty, `.` or `..`, contains a path separator (`/` or `\`) or a NUL, or is
    /// longer than 255 bytes: it must name exactly one folder inside the cache directory.
    case invalidName(String)

    /// The cache's folder does not exist and could not be created: a part of its path is a regular
    /// file (`ENOTDIR`), a parent is not writable (`EACCES`), the disk is full, …
    case directoryUnavailable(path: String, code: Int32)

    /// The file system is full, the user's disk quota is used up, or the process's file-size limit was
    /// reached (`ENOSPC`, `EDQUOT`, `EFBIG`). The previous entry of the key is unchanged.
    case diskFull(path: String, code: Int32)

    /// The folder or file may not be written: permissions (`EACCES`, `EPERM`) or a read-only file
    /// system (`EROFS`). Reads keep working.
    case notWritable(path: String, code: Int32)

    /// Another system call failed; `operation` names it (`open`, `write`, `fsync`, `rename`, `unlink`,
    /// `list`, `read`).
    case ioFailed(operation: String, path: String, code: Int32)

    /// The coder could not encode the key or the value; `underlying` is its error.
    case encodingFailed(_ underlying: any Error)

    /// The encoded entry (`bytes`, its header included) is larger than the cache's size limit, so it
    /// was not stored; any previous entry of the key was removed, so that it is not served in its place.
    case entryTooLarge(bytes: Int, sizeLimit: Int)

    /// A sentence describing the failure, with the system's message for `code`.
    public var description: String {
        switch self {
        case .invalidName(let name):
            "DiskCache: invalid cache name \(String(reflecting: name)): it must be one folder name, "
                + "not empty, '.' or '..', without '/', '\\' or NUL, at most 255 bytes"
        case .directoryUnavailable(let path, let code):
            "DiskCache: cannot create the cache folder \(path): \(Self.message(code))"
        case .diskFull(let path, let code):
            "DiskCache: no room to write \(path) (disk full, quota or file-size limit): \(Self.message(code))"
        case .notWritable(let path, let code):
            "DiskCache: cannot write \(path): \(Self.message(code))"
        case .ioFailed(let operation, let path, let code):
            "DiskCache: \(operation) failed for \(path): \(Self.message(code))"
        case .encodingFailed(let underlying):
            "DiskCache: the coder failed to encode: \(underlying)"
        case .entryTooLarge(let bytes, let sizeLimit):
            "DiskCache: an entry of \(bytes) bytes is larger than the size limit of \(sizeLimit) bytes"
        }
    }

    /// The system's message for `code`, with the number.
    static func message(_ code: Int32) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }

    /// The error for a failed write-side system call: full disk, not writable, or another failure.
    static func writing(_ operation: String, path: String, code: Int32) -> DiskCacheError {
        switch code {
        case ENOSPC, EDQUOT, EFBIG: .diskFull(path: path, code: code)
        case EACCES, EPERM, EROFS: .notWritable(path: path, code: code)
        default: .ioFailed(operation: operation, path: path, code: code)
        }
    }
}
