#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// Where a ``DiskCache`` keeps its files by default, and which names it accepts.
package enum DiskCacheLocation {
    /// The folder inside the platform's caches directory that holds every named cache of the library.
    package static let libraryFolder = "StoreFlowable"

    /// The default parent of every named cache: the platform's caches directory plus ``libraryFolder``.
    ///
    /// On Apple platforms, the user's caches directory (`FileManager`'s `cachesDirectory`). Elsewhere,
    /// `$XDG_CACHE_HOME` when it is set to an absolute path, else `$HOME/.cache`, else the temporary
    /// directory, as the XDG Base Directory specification says.
    ///
    /// - Parameter environment: Reads an environment variable; the process environment by default.
    /// - Returns: The directory (it may not exist yet).
    package static func defaultDirectory(
        environment: (String) -> String? = { ProcessInfo.processInfo.environment[$0] }
    ) -> URL {
        #if canImport(Darwin)
            let base =
                FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
                ?? FileManager.default.temporaryDirectory
        #else
            let base: URL
            if let cacheHome = environment("XDG_CACHE_HOME"), cacheHome.hasPrefix("/") {
                base = URL(filePath: cacheHome, directoryHint: .isDirectory)
            } else if let home = environment("HOME"), home.hasPrefix("/") {
                base = URL(filePath: home, directoryHint: .isDirectory).appending(
                    path: ".cache", directoryHint: .isDirectory)
            } else {
                base = FileManager.default.temporaryDirectory
            }
        #endif
        return base.appending(path: libraryFolder, directoryHint: .isDirectory)
    }

    /// Checks that `name` names exactly one folder.
    ///
    /// - Parameter name: A cache name.
    /// - Throws: ``DiskCacheError/invalidName(_:)`` when it is empty, `.` or `..`, contains `/`, `\` or
    ///   NUL, or is longer than 255 bytes in UTF-8.
    package static func validate(name: String) throws(DiskCacheError) {
        let forbidden: Set<Character> = ["/", "\\", "\0"]
        guard !name.isEmpty, name != ".", name != "..", name.utf8.count <= 255,
            !name.contains(where: { forbidden.contains($0) })
        else { throw .invalidName(name) }
    }

    /// The file system path of a folder URL, without a trailing slash.
    package static func path(of url: URL) -> String {
        var path = url.path(percentEncoded: false)
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }
}
