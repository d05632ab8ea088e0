#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Bionic)
    import Bionic
#endif

/// `write(2)`, named apart from ``FileIO/write(_:_:)``.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Darwin)
        Darwin.write(descriptor, buffer, count)
    #elseif canImport(Glibc)
        Glibc.write(descriptor, buffer, count)
    #elseif canImport(Musl)
        Musl.write(descriptor, buffer, count)
    #elseif canImport(Bionic)
        Bionic.write(descriptor, buffer, count)
    #endif
}

/// `rename(2)`, named apart from ``FileIO/rename(_:to:)``.
private func systemRename(_ source: String, _ destination: String) -> Int32 {
    #if canImport(Darwin)
        Darwin.rename(source, destination)
    #elseif canImport(Glibc)
        Glibc.rename(source, destination)
    #elseif canImport(Musl)
        Musl.rename(source, destination)
    #elseif canImport(Bionic)
        Bionic.rename(source, destination)
    #endif
}

/// A failed system call: its `errno`.
struct SystemCallError: Error {
    /// The `errno` value.
    var code: Int32

    /// The current `errno`.
    static var current: SystemCallError { SystemCallError(code: errno) }

    /// Whether the error means that the file (or a folder on its path) is not there.
    var isMissing: Bool { code == ENOENT || code == ENOTDIR }
}

/// Which file an open descriptor refers to: while the descriptor stays open, no other file can have the
/// same device and inode numbers, so comparing them with a path's tells whether the path was replaced.
struct FileIdentity: Equatable {
    /// The device number.
    var device: UInt64
    /// The inode number.
    var inode: UInt64

    /// The identity of a `stat` result.
    init(_ info: stat) {
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
    }
}

/// A file in a folder, as a directory scan sees it.
struct ScannedFile {
    /// The file's name in the folder.
    var name: String
    /// Its size in bytes.
    var size: Int
    /// Its modification time, in nanoseconds since 1970.
    var modified: Int64
}

/// The synchronous system calls of ``DiskCache``, each a thin wrapper that retries on `EINTR` and
/// reports `errno` as a typed error. None takes a lock.
enum FileIO {
    /// Opens an existing file for reading (not following a symbolic link at the last component).
    ///
    /// - Returns: The descriptor; the caller closes it.
    static func openForReading(_ path: String) throws(SystemCallError) -> Int32 {
        while true {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            if descriptor >= 0 { return descriptor }
            if errno != EINTR { throw .current }
        }
    }

    /// Creates a new file for writing; fails if `path` exists.
    ///
    /// - Returns: The descriptor; the caller closes it.
    static func createExclusively(_ path: String) throws(SystemCallError) -> Int32 {
        while true {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if descriptor >= 0 { return descriptor }
            if errno != EINTR { throw .current }
        }
    }

    /// The identity and size of an open file.
    static func status(of descriptor: Int32) throws(SystemCallError) -> (identity: FileIdentity, size: Int) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .current }
        return (FileIdentity(info), Int(info.st_size))
    }

    /// The identity of the file at `path` (not following a symbolic link), or `nil` if there is none.
    static func identity(at path: String) -> FileIdentity? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return FileIdentity(info)
    }

    /// Reads `size` bytes from the start of an open file (fewer if it is shorter).
    static func read(_ descriptor: Int32, size: Int) throws(SystemCallError) -> [UInt8] {
        var failure: SystemCallError?
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = 0
            while count < size {
                let result = pread(descriptor, buffer.baseAddress.map { $0 + count }, size - count, off_t(count))
                if result > 0 {
                    count += result
                } else if result == 0 {
                    return
                } else if errno != EINTR {
                    failure = .current
                    return
                }
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// Writes all of `bytes` to an open file.
    static func write(_ descriptor: Int32, _ bytes: [UInt8]) throws(SystemCallError) {
        let failure = bytes.withUnsafeBytes { buffer -> SystemCallError? in
            var written = 0
            while written < buffer.count {
                let result = systemWrite(descriptor, buffer.baseAddress.map { $0 + written }, buffer.count - written)
                if result >= 0 {
                    written += result
                } else if errno != EINTR {
                    return .current
                }
            }
            return nil
        }
        if let failure { throw failure }
    }

    /// Flushes an open file's data and metadata to the storage device (`F_FULLFSYNC` on Apple
    /// platforms, where `fsync` stops at the drive's cache).
    static func synchronize(_ descriptor: Int32) throws(SystemCallError) {
        #if canImport(Darwin)
            if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
        #endif
        while fsync(descriptor) != 0 {
            if errno != EINTR { throw .current }
        }
    }

    /// Flushes a folder's entries (names created, renamed or removed in it) to the storage device.
    static func synchronizeFolder(_ path: String) throws(SystemCallError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_DIRECTORY)
        guard descriptor >= 0 else { throw .current }
        defer { close(descriptor) }
        try synchronize(descriptor)
    }

    /// Closes a descriptor that was written to, reporting a late write error.
    static func closeAfterWriting(_ descriptor: Int32) throws(SystemCallError) {
        // After `close` fails the descriptor is released anyway (POSIX leaves EINTR unspecified, and
        // Linux and Darwin release it), so it is never closed twice.
        if close(descriptor) != 0, errno != EINTR { throw .current }
    }

    /// Renames `source` over `destination`, atomically replacing it.
    static func rename(_ source: String, to destination: String) throws(SystemCallError) {
        guard systemRename(source, destination) == 0 else { throw .current }
    }

    /// Removes the file at `path`.
    static func remove(_ path: String) throws(SystemCallError) {
        guard unlink(path) == 0 else { throw .current }
    }

    /// Sets an open file's modification and access times to now.
    static func touch(_ descriptor: Int32) {
        // A failure (a read-only file system) only loses recency information for the size limit.
        _ = futimens(descriptor, nil)
    }

    /// Creates the folder at `path` and any missing parents, with permissions 0700 for new ones.
    static func createFolder(_ path: String) throws(SystemCallError) {
        if mkdir(path, 0o700) == 0 { return }
        let code = errno
        if code == EEXIST { return }
        guard code == ENOENT else { throw SystemCallError(code: code) }
        let parent = parentPath(of: path)
        guard parent != path, !parent.isEmpty else { throw SystemCallError(code: code) }
        try createFolder(parent)
        if mkdir(path, 0o700) == 0 || errno == EEXIST { return }
        throw .current
    }

    /// The path of the folder holding `path`.
    static func parentPath(of path: String) -> String {
        var components = path.split(separator: "/", omittingEmptySubsequences: true)
        guard !components.isEmpty else { return path }
        components.removeLast()
        return (path.hasPrefix("/") ? "/" : "") + components.joined(separator: "/")
    }

    /// The regular files in the folder at `path`, with their sizes and modification times.
    static func scan(_ path: String) throws(SystemCallError) -> [ScannedFile] {
        guard let folder = opendir(path) else { throw .current }
        defer { closedir(folder) }
        let folderDescriptor = dirfd(folder)
        var files: [ScannedFile] = []
        while true {
            errno = 0
            guard let entry = readdir(folder) else {
                if errno != 0 { throw .current }
                return files
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            var info = stat()
            // A file removed since the listing is skipped.
            guard fstatat(folderDescriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            guard info.st_mode & S_IFMT == S_IFREG else { continue }
            files.append(ScannedFile(name: name, size: Int(info.st_size), modified: modificationTime(info)))
        }
    }

    /// A `stat` result's modification time in nanoseconds since 1970.
    static func modificationTime(_ info: stat) -> Int64 {
        #if canImport(Darwin)
            let time = info.st_mtimespec
        #else
            let time = info.st_mtim
        #endif
        return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
    }
}
