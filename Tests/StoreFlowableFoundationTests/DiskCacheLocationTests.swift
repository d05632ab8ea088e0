import Foundation
import StoreFlowable
import StoreFlowableFoundation
import StoreFlowableTesting
import Testing

/// Cache names, default directories and file names.
@Suite struct DiskCacheLocationTests {
    @Test(arguments: ["", ".", "..", "a/b", "/", "a\\b", "a\u{0}b", String(repeating: "x", count: 256)])
    func anInvalidNameIsATypedError(name: String) {
        #expect {
            _ = try DiskCache<Int, Int>(name: name, directory: URL(filePath: "/tmp"))
        } throws: { error in
            guard case .invalidName(let invalid) = error as? DiskCacheError else { return false }
            return invalid == name
        }
    }

    @Test func aValidNameIsOneFolderInTheDirectory() throws {
        let cache = try DiskCache<Int, Int>(name: "users.v2", directory: URL(filePath: "/var/cache/app"))
        #expect(cache.folder.path(percentEncoded: false) == "/var/cache/app/users.v2/")
        #expect(cache.name == "users.v2")
    }

    #if !canImport(Darwin)
        @Test func theDefaultDirectoryFollowsTheXDGSpecification() {
            func directory(_ environment: [String: String]) -> String {
                DiskCacheLocation.defaultDirectory(environment: { environment[$0] }).path(percentEncoded: false)
            }
            #expect(directory(["XDG_CACHE_HOME": "/x/cache", "HOME": "/home/u"]) == "/x/cache/StoreFlowable/")
            #expect(directory(["XDG_CACHE_HOME": "relative", "HOME": "/home/u"]) == "/home/u/.cache/StoreFlowable/")
            #expect(directory(["HOME": "/home/u"]) == "/home/u/.cache/StoreFlowable/")
            #expect(directory([:]).hasSuffix("/StoreFlowable/"))
        }
    #endif

    @Test func theDefaultFolderIsInsideTheLibraryFolder() throws {
        let cache = try DiskCache<Int, Int>(name: "users")
        #expect(cache.folder.path(percentEncoded: false).hasSuffix("/StoreFlowable/users/"))
    }

    /// File names come from the encoded key's bytes (FNV-1a 64), never from `hashValue`, so every
    /// process finds the same file.
    @Test func fileNamesAreStableAcrossProcesses() throws {
        let cache = try DiskCache<String, Int>(name: "c", directory: URL(filePath: "/tmp/x"))
        #expect(try cache.filePath(forKey: "user-1") == "/tmp/x/c/0fd7a397c32d6742.entry")
        let numbers = try DiskCache<Int, Int>(name: "c", directory: URL(filePath: "/tmp/x"))
        #expect(try numbers.filePath(forKey: 1) == "/tmp/x/c/af63ac4c86019afc.entry")
    }

    @Test func errorsDescribeThemselves() {
        let error = DiskCacheError.diskFull(path: "/p", code: 28)
        #expect(error.description.contains("/p"))
        #expect(error.description.contains("errno 28"))
        #expect(
            DiskCacheEvent.removedDamagedFile(path: "/p", problem: .checksumMismatch).description
                == "removed damaged file /p (checksum mismatch)")
    }
}
