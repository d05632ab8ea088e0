import Foundation
import PostgresNIO
import StoreFlowable
import StoreFlowableTesting
import Synchronization
import Testing

@testable import StoreFlowablePostgres

/// Writes of one key by two instances that race: the row's `seq` tells which committed last.
@Suite(.timeLimit(.minutes(2)))
struct PostgresCacheWriteRaceTests {
    /// An upsert that waited for another writer's row lock draws its `seq` after that writer: the
    /// row's `seq` grows in commit order. (It used to keep the number drawn for the insert, before the
    /// wait: the later write then carried the smaller number.)
    @Test func aWriteThatWaitedForAnotherWritersRowLockIsNumberedAfterIt() async throws {
        try await withClient { client in
            let cache = try await makeCache(client)
            let table = "storeflowable_cache_" + cache.name
            try await cache.setEntry(CacheEntry(value: "first", storedAt: cache.clock.now), forKey: 1)
            let (theirs, ours) = try await withClient { other in
                try await other.withConnection { connection in
                    // Another instance's write of key 1 (encoded `1`), in a transaction that holds the row.
                    try await run(connection, "BEGIN")
                    try await run(
                        connection,
                        "SELECT 1 FROM \(unescaped: table) WHERE key = convert_to('1', 'UTF8') FOR UPDATE")
                    // This cache's write draws a number for its insert, then waits for the row.
                    let write = Task {
                        try await cache.setEntry(CacheEntry(value: "ours", storedAt: cache.clock.now), forKey: 1)
                    }
                    try await waitUntil(client, "the write waits for the row") { client in
                        try await backends(client, on: table, waitingForLock: true) >= 1
                    }
                    var theirs: Int64 = 0
                    let update: PostgresQuery = """
                        UPDATE \(unescaped: table) SET value = convert_to('"theirs"', 'UTF8'),
                            seq = nextval('storeflowable_seq') WHERE key = convert_to('1', 'UTF8') RETURNING seq
                        """
                    for try await seq in try await connection.query(update, logger: connection.logger)
                        .decode(Int64.self)
                    {
                        theirs = seq
                    }
                    try await run(connection, "COMMIT")
                    try await write.value
                    let ours = try await scalar(
                        client, "SELECT seq FROM \(unescaped: table) WHERE key = convert_to('1', 'UTF8')")
                    return (theirs, ours)
                }
            }
            #expect(try await cache.entry(forKey: 1)?.value == "ours")
            let seq = try #require(ours)
            #expect(seq > theirs, "the row written last has the larger seq")
        }
    }

    // MARK: A fetch that writes after a change it has not heard

    /// The race of `listenForChanges(reloading:)`'s documentation, in the one order the reload alone
    /// cannot see: B's fetch reads the origin's old value; A updates the key (origin, then table); B's
    /// fetch writes the old value, committing after A's write; only then does B's listener hand it A's
    /// change. B marks its write stale: both instances end with the new value, B from the origin, A
    /// from the table (it reads B's refetched value). Without the mark, both kept the old value fresh.
    @Test func aFetchWrittenAfterAnUpdateItHadNotHeardIsMarkedStaleOnBothInstances() async throws {
        try await withRace(key: 1) { race in
            let (a, b) = (race.a, race.b)
            await b.cache.reload(.key(1, version: race.updateVersion), in: b.stores)
            try #require(try await b.stores[1].requireData() == "new")
            try await race.watched.waitForLatest { $0.isCompleted && $0.content == "new" }
            // A hears B's old value, B's mark and B's refetched value, in commit order.
            let heard = try await a.handOver()
            #expect(heard.count == 3)
            #expect(try await a.stores[1].requireData() == "new")
            #expect(try await b.cache.entry(forKey: 1)?.isInvalidated == false)
            #expect(a.fetches.elements == [])
            #expect(b.fetches.elements == ["old", "new"])
            // A did not mark anything in return: B hears nothing more of key 1.
            #expect(try await b.handOver() == [])
        }
    }

    /// The same race on a key too long for a notification: B hears A's change by the key's hash, and
    /// marks its own write of the key with that hash.
    @Test func aLongKeyFetchedBeforeAnUpdateAndWrittenAfterItIsMarkedStaleToo() async throws {
        let key = String(repeating: "k", count: 6_000)
        try await withRace(key: key, markerKey: { "marker-\($0)" }) { race in
            let (a, b) = (race.a, race.b)
            let hash = try b.cache.keyHash(forKey: key)
            #expect(race.update == .keyHash(hash, version: race.updateVersion))
            await b.cache.reload(race.update, in: b.stores)
            try #require(try await b.stores[key].requireData() == "new")
            _ = try await a.handOver()
            #expect(try await a.stores[key].requireData() == "new")
            #expect(b.fetches.elements == ["old", "new"])
        }
    }

    /// After B's mark both instances refetch, and the first write of the new value changes the row;
    /// the other finds the row holding its value, which only refreshes `stored_at`: it is not
    /// remembered, so nobody marks again. The steps are explicit: A's refetch writes first, B's waits at
    /// a gate until then, and each instance is handed what the other wrote until neither writes a
    /// change of the key. (Were B's refreshing write remembered, B would mark A's write in turn, and A
    /// would then refetch and write again, and so on, for as long as their refetches overlapped.)
    @Test func twoInstancesThatBothRefetchAfterAMarkSettleWithoutMarkingAgain() async throws {
        try await withRace(key: 1) { race in
            let (a, b) = (race.a, race.b)
            // A subscribes now: it reads B's old value, fresh.
            let watchedA = StateRecorder(a.stores[1].publish())
            try await watchedA.waitForLatest { $0.isCompleted && $0.content == "old" }
            // B's mark refetches; that fetch reads the origin, then waits.
            let refetch = Release()
            b.holdNextFetch(at: refetch)
            await b.cache.reload(.key(1, version: race.updateVersion), in: b.stores)
            try #require(await b.stores[1].dataState().isLoading, "B refetches")
            try await b.fetches.wait(forCount: 2)
            // A hears B's old value and B's mark: it refetches and writes the new value first.
            #expect(try await a.handOver().count == 2)
            #expect(try await a.stores[1].requireData() == "new")
            // Then B's refetch writes the same value.
            refetch.open()
            #expect(try await b.stores[1].requireData() == "new")
            // B hears A's refetched value (after A's update, handed over already): nothing to mark.
            let fromA = try await b.handOver()
            #expect(fromA.count == 1)
            try await race.watched.waitForLatest { $0.isCompleted && $0.content == "new" }
            // Settled: neither wrote a change of the key since.
            #expect(try await a.handOver() == [])
            #expect(try await b.handOver() == [])
            #expect(b.fetches.elements == ["old", "new"])
            #expect(a.fetches.elements.count <= 2)
            #expect(try await b.cache.entry(forKey: 1)?.isInvalidated == false)
            try await watchedA.waitForLatest { $0.isCompleted && $0.content == "new" }
            watchedA.cancel()
        }
    }

    /// The common case: B wrote the key before A's update, and hears the update after that. Its write
    /// is older than the change: no mark, no origin call, and A hears nothing back.
    @Test func anUpdateAfterTheInstancesOwnWriteReachesItWithoutAMarkOrAFetch() async throws {
        try await withInstances { a, b, origin in
            let watched = StateRecorder(b.stores[1].publish())
            try await watched.waitForLatest { $0.isCompleted && $0.content == "old" }
            #expect(try await a.handOver().count == 1, "B's fetch")
            origin.set("new")
            await a.stores[1].update(newData: "new")
            #expect(try await b.handOver().count == 1, "A's update")
            try await watched.waitForLatest { $0.isCompleted && $0.content == "new" }
            #expect(try await b.stores[1].requireData() == "new")
            #expect(b.fetches.elements == ["old"])
            #expect(try await a.handOver() == [])
            let sinceOld = watched.states.drop { !($0.isCompleted && $0.content == "old") }
            #expect(!sinceOld.contains { $0.isLoading }, "no refetch: \(watched.states)")
            watched.cancel()
        }
    }

    /// B's fetch began after the origin changed, and wrote after A's update of the same value: the row
    /// already held it, so the write only refreshed `stored_at`, silently. B then hears A's update:
    /// no mark, no second fetch.
    @Test func aFetchThatOnlyRefreshedTheRowAfterAnUpdateIsNotMarked() async throws {
        try await withInstances { a, b, origin in
            origin.set("new")
            let gate = Release()
            b.holdNextFetch(at: gate)
            let watched = StateRecorder(b.stores[1].publish())
            try await b.fetches.wait(forCount: 1)
            await a.stores[1].update(newData: "new")
            let update = try await b.handOver(handing: false)
            gate.open()
            try await watched.waitForLatest { $0.isCompleted && $0.content == "new" }
            for change in update { await b.cache.reload(change, in: b.stores) }
            #expect(try await b.stores[1].requireData() == "new")
            #expect(b.fetches.elements == ["new"])
            #expect(try await a.handOver() == [])
            watched.cancel()
        }
    }

    /// Only the reloading listener makes a cache object remember its writes.
    @Test func onlyTheReloadingListenerMakesTheCacheRememberItsWrites() async throws {
        try await withClient { client in
            let events = Recorder<PostgresCacheEvent>()
            let cache = try await makeCache(client, events: events.record)
            try await cache.setEntry(CacheEntry(value: "v", storedAt: cache.clock.now), forKey: 1)
            #expect(!cache.ownWrites.isTracking)
            #expect(!cache.ownWrites.takeWrite(of: try cache.encodedKey(1), newerThan: 0))
            let stores = KeyedStore(cache: cache) { _ in "origin" }
            let reloading = Task { await cache.listenForChanges(reloading: stores, clock: ManualClock()) }
            try await events.wait("listening") { events in
                events.contains { if case .listenerConnected = $0 { true } else { false } }
            }
            #expect(cache.ownWrites.isTracking)
            try await cache.setEntry(CacheEntry(value: "w", storedAt: cache.clock.now), forKey: 1)
            #expect(cache.ownWrites.takeWrite(of: try cache.encodedKey(1), newerThan: 0))
            reloading.cancel()
            await reloading.value
        }
    }

    // MARK: The record

    /// The record holds the latest ``PostgresOwnWrites/limit`` writes: the oldest is forgotten first.
    @Test func theRecordForgetsItsOldestWritePastItsLimit() {
        let writes = PostgresOwnWrites()
        func key(_ number: Int) -> Data { Data("\(number)".utf8) }
        writes.record(key(0), seq: 10)
        #expect(!writes.takeWrite(of: key(0), newerThan: 0), "nothing recorded before tracking starts")
        writes.startTracking()
        let limit = PostgresOwnWrites.limit
        for number in 0..<limit { writes.record(key(number), seq: Int64(100 + number)) }
        // Key 1 written again: its first record is the oldest but no longer its latest.
        writes.record(key(1), seq: 100_000)
        writes.record(key(limit), seq: 100_001)
        #expect(!writes.takeWrite(of: key(0), newerThan: 0), "the oldest, forgotten")
        #expect(writes.takeWrite(of: key(1), newerThan: 99_999))
        #expect(!writes.takeWrite(of: key(2), newerThan: 102), "not newer than the change")
        #expect(writes.takeWrite(of: key(2), newerThan: 101))
        #expect(!writes.takeWrite(of: key(2), newerThan: 101), "taken once")
        #expect(writes.takeWrite(of: key(limit), newerThan: 0))
        // A write recorded after a later one of the same key (two at once) does not replace it.
        writes.record(key(3), seq: 200_000)
        writes.record(key(3), seq: 150_000)
        #expect(writes.takeWrite(of: key(3), newerThan: 199_999))
    }

    /// Only a key long enough to be notified by its hash keeps a hash, and is found by it.
    @Test func theRecordFindsALongKeyByItsHash() {
        let writes = PostgresOwnWrites()
        writes.startTracking()
        let long = Data(repeating: UInt8(ascii: "k"), count: 6_000)
        let short = Data("short".utf8)
        writes.record(long, seq: 10)
        writes.record(short, seq: 11)
        let hash = PostgresCacheNotification.fnv1a(long)
        #expect(writes.takeWrites(withHash: hash, newerThan: 10) == [])
        #expect(writes.takeWrites(withHash: hash, newerThan: 9) == [long])
        #expect(writes.takeWrites(withHash: hash, newerThan: 9) == [], "taken once")
        #expect(writes.takeWrites(withHash: PostgresCacheNotification.fnv1a(short), newerThan: 0) == [])
        #expect(!PostgresOwnWrites.mayBeNotifiedByHash(Data(repeating: 0, count: 5_000)))
        #expect(PostgresOwnWrites.mayBeNotifiedByHash(Data(repeating: 0, count: 5_200)))
    }
}

/// Runs `statement` on `connection`, discarding its rows.
///
/// - Parameters:
///   - connection: A connection of the test's own.
///   - statement: The statement.
/// - Throws: What postgres-nio throws.
private func run(_ connection: PostgresConnection, _ statement: PostgresQuery) async throws {
    for try await _ in try await connection.query(statement, logger: connection.logger) {}
}

/// What a test of the race knows once it happened (see ``withRace(key:_:)``).
struct Race<Key: Hashable & Sendable & Codable>: Sendable {
    /// The instance that updated the key.
    let a: RaceInstance<Key>
    /// The instance whose fetch wrote the old value after A's update.
    let b: RaceInstance<Key>
    /// B's subscriber of the key.
    let watched: StateRecorder<String>
    /// A's update, as B heard it.
    let update: PostgresCacheChange<Key>
    /// The `seq` of A's update.
    let updateVersion: Int64
}

/// Runs `body` with two instances, A and B, on a new table, and their origin, holding `"old"`.
///
/// - Parameters:
///   - markerKey: The key of a marker (see ``RaceMarkers``), given its number; never a key the test
///     uses.
///   - body: The test, given A, B and the origin.
/// - Throws: What `body` threw.
func withInstances<Key: Hashable & Sendable & Codable>(
    markerKey: @escaping @Sendable (Int) -> Key,
    _ body: @Sendable (RaceInstance<Key>, RaceInstance<Key>, RaceOrigin) async throws -> Void
) async throws {
    try await withClient { client in
        let name = uniqueName()
        try await PostgresCacheSchema.migrate(name: name, client: client)
        let origin = RaceOrigin("old")
        let markers = RaceMarkers(
            cache: try await PostgresCache<Key, String>(name: name, client: client), key: markerKey)
        let a = try await RaceInstance<Key>(client: client, name: name, origin: origin, markers: markers)
        let b = try await RaceInstance<Key>(client: client, name: name, origin: origin, markers: markers)
        try await body(a, b, origin)
        await a.heard.stop()
        await b.heard.stop()
    }
}

/// ``withInstances(markerKey:_:)`` with `Int` keys, the markers from 1,000,000 up.
func withInstances(
    _ body: @Sendable (RaceInstance<Int>, RaceInstance<Int>, RaceOrigin) async throws -> Void
) async throws {
    try await withInstances(markerKey: { 1_000_000 + $0 }, body)
}

/// Runs `body` once the race happened on `key`: B's subscriber's fetch read the origin's `"old"`; A
/// updated the origin and then the key to `"new"`; B's listener heard it (not handed to B yet); B's
/// fetch then wrote `"old"`, and its subscriber shows it.
///
/// - Parameters:
///   - key: The key.
///   - markerKey: The key of a marker, given its number.
///   - body: The test.
/// - Throws: What `body` threw, or when a step does not happen.
func withRace<Key: Hashable & Sendable & Codable>(
    key: Key, markerKey: @escaping @Sendable (Int) -> Key, _ body: @Sendable (Race<Key>) async throws -> Void
) async throws {
    try await withInstances(markerKey: markerKey) { a, b, origin in
        let gate = Release()
        b.holdNextFetch(at: gate)
        let watched = StateRecorder(b.stores[key].publish())
        try await b.fetches.wait(forCount: 1)
        origin.set("new")
        await a.stores[key].update(newData: "new")
        let heard = try await b.handOver(handing: false)
        let update = try #require(heard.last)
        let version: Int64
        switch update {
        case .key(_, let found), .keyHash(_, let found): version = found
        case .all: throw Recorder<Int>.NotReached(description: "A's update, heard by B: \(heard)")
        }
        gate.open()
        try await watched.waitForLatest { $0.isCompleted && $0.content == "old" }
        #expect(try await b.cache.entry(forKey: key)?.value == "old")
        try await body(Race(a: a, b: b, watched: watched, update: update, updateVersion: version))
        watched.cancel()
    }
}

/// ``withRace(key:markerKey:_:)`` on an `Int` key.
func withRace(key: Int, _ body: @Sendable (Race<Int>) async throws -> Void) async throws {
    try await withRace(key: key, markerKey: { 1_000_000 + $0 }, body)
}

/// The origin both instances fetch from.
final class RaceOrigin: Sendable {
    private let current: Mutex<String>

    /// - Parameter value: The origin's first value.
    init(_ value: String) { current = Mutex(value) }

    /// The origin's value now.
    var value: String { current.withLock { $0 } }

    /// Changes the origin's value.
    ///
    /// - Parameter value: The new value.
    func set(_ value: String) { current.withLock { $0 = value } }
}

/// Writes through a third cache object on the instances' table, each to a key of its own: a
/// listener that hears a marker has heard every change committed before it (notifications arrive in
/// commit order), so a test knows what an instance heard by then without waiting for anything else.
final class RaceMarkers<Key: Hashable & Sendable & Codable>: Sendable {
    /// The third cache object.
    let cache: PostgresCache<Key, String>
    /// The key of the marker numbered `n`.
    let key: @Sendable (Int) -> Key
    /// How many markers were written.
    private let count = Tally()

    /// - Parameters:
    ///   - cache: A cache object on the instances' table, of its own.
    ///   - key: The key of each marker, given its number.
    init(cache: PostgresCache<Key, String>, key: @escaping @Sendable (Int) -> Key) {
        self.cache = cache
        self.key = key
    }

    /// Writes the next marker.
    ///
    /// - Returns: Its key.
    /// - Throws: A ``PostgresCacheError``.
    func write() async throws -> Key {
        let marker = key(count.add())
        try await cache.setEntry(CacheEntry(value: "marker", storedAt: cache.clock.now), forKey: marker)
        return marker
    }

    /// Whether `change` is a marker's.
    ///
    /// - Parameter change: A change heard.
    /// - Returns: `true` for a marker's key.
    func isMarker(_ change: PostgresCacheChange<Key>) -> Bool {
        guard case .key(let changed, _) = change else { return false }
        return (1..<count.value + 1).contains { key($0) == changed }
    }
}

/// One instance whose reloading listener the test plays by hand: a cache object that remembers its
/// writes as under `listenForChanges(reloading:)`, its stores, and a plain listener recording the
/// changes it would hear, which the test hands to `reload(_:in:)` when it chooses.
final class RaceInstance<Key: Hashable & Sendable & Codable>: Sendable {
    /// The instance's cache object.
    let cache: PostgresCache<Key, String>
    /// Its stores.
    let stores: KeyedStore<PostgresCache<Key, String>>
    /// The changes this cache object's listener hears.
    let heard: TestListener<Key>
    /// What each of its fetches read from the origin, in order.
    let fetches: Recorder<String>
    /// The markers of the test.
    private let markers: RaceMarkers<Key>
    /// How many of `heard`'s changes the test has taken.
    private let taken = Mutex(0)
    /// The gate the next fetch waits at after reading the origin, if any.
    private let hold: FetchHold

    /// Opens a cache object on `name`, remembering its writes, and starts its listener.
    ///
    /// - Parameters:
    ///   - client: A running client.
    ///   - name: The migrated cache name.
    ///   - origin: The origin of its fetches.
    ///   - markers: The markers of the test.
    init(client: PostgresClient, name: String, origin: RaceOrigin, markers: RaceMarkers<Key>) async throws {
        let cache = try await PostgresCache<Key, String>(name: name, client: client)
        cache.ownWrites.startTracking()
        self.cache = cache
        self.markers = markers
        let fetches = Recorder<String>()
        let hold = FetchHold()
        self.fetches = fetches
        self.hold = hold
        stores = KeyedStore(cache: cache) { _ in
            let value = origin.value
            fetches.record(value)
            await hold.take()?.wait()
            return value
        }
        heard = TestListener(cache)
        try await heard.waitUntilListening()
    }

    /// Makes the next fetch wait at `gate` once it read the origin.
    ///
    /// - Parameter gate: The gate.
    func holdNextFetch(at gate: Release) {
        hold.set(gate)
    }

    /// Waits until this instance heard every change committed so far (a marker written now), then
    /// hands its reload the changes heard since the last call, in order, but the markers and `.all`
    /// (the listener's start).
    ///
    /// - Parameter handing: Whether to hand them to the reload (otherwise they are only returned).
    /// - Returns: Those changes.
    /// - Throws: When the marker is not heard.
    @discardableResult
    func handOver(handing: Bool = true) async throws -> [PostgresCacheChange<Key>] {
        let marker = try await markers.write()
        let heard = try await heard.changes.wait("the marker") { changes in
            changes.contains { if case .key(marker, _) = $0 { true } else { false } }
        }
        let new = taken.withLock { taken in
            defer { taken = heard.count }
            return heard[taken...]
        }
        let changes = new.filter { $0 != .all && !markers.isMarker($0) }
        if handing { for change in changes { await cache.reload(change, in: stores) } }
        return changes
    }
}

/// The gate that an instance's next fetch waits at, set by the test.
final class FetchHold: Sendable {
    private let gate = Mutex<Release?>(nil)

    /// Makes the next fetch wait at `gate`.
    ///
    /// - Parameter gate: The gate.
    func set(_ gate: Release) {
        self.gate.withLock { $0 = gate }
    }

    /// Takes the gate, if any: only one fetch waits at it.
    ///
    /// - Returns: The gate.
    func take() -> Release? {
        gate.withLock { gate in
            defer { gate = nil }
            return gate
        }
    }
}
