/// What a size-limited ``DiskCache`` knows of its folder: each entry file's size and how recently it
/// was used, to pick the least recently used files when the folder goes over the limit.
///
/// It is an optimisation, never the source of truth: it is built from a directory scan (ordered by
/// modification time, which reads refresh), updated by this instance's reads and writes, and rebuilt
/// from a new scan before every eviction, so files written or removed by other processes are counted.
/// A value type, guarded by the cache's lock.
struct DiskCacheIndex {
    /// One entry file.
    struct Item {
        /// Its size in bytes.
        var size: Int
        /// When it was last used: a larger number is more recent.
        var recency: UInt64
    }

    /// The entry files by name.
    private(set) var items: [String: Item] = [:]
    /// The sum of their sizes.
    private(set) var totalSize = 0
    /// The recency the next use gets.
    private(set) var nextRecency: UInt64 = 1
    /// Whether a scan has filled the index; before that it is not used for eviction.
    private(set) var isBuilt = false
    /// The files removed while a scan was running, which its listing may still show.
    private var removedDuringScan: Set<String>?

    /// Records a use of file `name` (written or read), `size` bytes long: it becomes the most recent.
    mutating func use(_ name: String, size: Int) {
        totalSize += size - (items[name]?.size ?? 0)
        items[name] = Item(size: size, recency: nextRecency)
        nextRecency += 1
        removedDuringScan?.remove(name)
    }

    /// Records that file `name` was removed.
    mutating func remove(_ name: String) {
        if let item = items.removeValue(forKey: name) { totalSize -= item.size }
        removedDuringScan?.insert(name)
    }

    /// Marks the start of a scan; returns the recency from which uses are newer than the scan.
    mutating func beginScan() -> UInt64 {
        removedDuringScan = []
        return nextRecency
    }

    /// Replaces the index by a scan's result, keeping what this instance did since the scan began.
    ///
    /// Files used since `scanStart` keep their size and stay the most recent; the other scanned files
    /// are ordered by modification time (then by their previous recency, for files touched within the
    /// same clock tick); files removed during the scan are left out.
    ///
    /// - Parameters:
    ///   - scanned: The entry files the scan found.
    ///   - scanStart: What ``beginScan()`` returned.
    mutating func finishScan(_ scanned: [ScannedFile], scanStart: UInt64) {
        let removed = removedDuringScan ?? []
        removedDuringScan = nil
        let recent = items.filter { $0.value.recency >= scanStart }
        let older = scanned.filter { recent[$0.name] == nil && !removed.contains($0.name) }
            .sorted { ($0.modified, items[$0.name]?.recency ?? 0) < ($1.modified, items[$1.name]?.recency ?? 0) }
        var rebuilt: [String: Item] = [:]
        rebuilt.reserveCapacity(older.count + recent.count)
        var recency: UInt64 = 1
        var total = 0
        for file in older {
            rebuilt[file.name] = Item(size: file.size, recency: recency)
            recency += 1
            total += file.size
        }
        for (name, item) in recent.sorted(by: { $0.value.recency < $1.value.recency }) {
            rebuilt[name] = Item(size: item.size, recency: recency)
            recency += 1
            total += item.size
        }
        items = rebuilt
        totalSize = total
        nextRecency = recency
        isBuilt = true
    }

    /// Ends a scan whose listing failed, keeping the index as it is.
    mutating func abandonScan() {
        removedDuringScan = nil
    }

    /// Removes the least recently used files, except `keeping`, until the total is at most `target`
    /// bytes, and returns them, least recent first.
    mutating func evict(downTo target: Int, keeping: String) -> [(name: String, size: Int)] {
        guard totalSize > target else { return [] }
        var victims: [(name: String, size: Int)] = []
        for (name, item) in items.sorted(by: { $0.value.recency < $1.value.recency }) where name != keeping {
            guard totalSize > target else { break }
            items[name] = nil
            totalSize -= item.size
            victims.append((name, item.size))
        }
        return victims
    }
}
