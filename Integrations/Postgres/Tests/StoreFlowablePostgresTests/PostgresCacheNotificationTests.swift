import Foundation
import PostgresNIO
import StoreFlowable
import StoreFlowablePostgres
import Testing

/// Writes through a cache notify the cache's channel in their own statement: another cache object on
/// the table hears of each change, the writer does not, and nothing is heard of a write that failed,
/// was rolled back or changed nothing.
///
/// A test shows that a change was not notified without waiting for time to pass: PostgreSQL delivers
/// the notifications of different transactions in the order they committed, so when a later write's
/// notification arrives next, the earlier write sent none.
@Suite(.timeLimit(.minutes(2)))
struct PostgresCacheNotificationTests {
    @Test func eachWriteNotifiesAnotherCacheObjectButNotItsWriter() async throws {
        try await withClient { client in
            let name = uniqueName()
            let writer = try await makeCache(client, name: name)
            let reader = try await makeCache(client, name: name)
            #expect(writer.instanceID != reader.instanceID)
            let heard = TestListener(reader)
            let writerHeard = TestListener(writer)
            try await heard.waitUntilListening()
            try await writerHeard.waitUntilListening()
            let time = CacheTime(nanosecondsSince1970: 1)

            try await writer.setEntry(CacheEntry(value: "one", storedAt: time), forKey: 1)
            let setSeq = try await seq(client, writer, key: 1)
            try await writer.invalidateEntry(forKey: 1)
            try await writer.removeEntry(forKey: 1)
            try await writer.setEntry(CacheEntry(value: "two", storedAt: time), forKey: 2)
            let twoSeq = try await seq(client, writer, key: 2)
            try await writer.setEntry(CacheEntry(value: "three", storedAt: time), forKey: 3)
            let threeSeq = try await seq(client, writer, key: 3)
            try await writer.invalidateEntries(where: { $0 == 2 })
            try await writer.removeAllEntries()
            let changes = try await heard.changes.wait(forCount: 8)
            #expect(
                changes == [
                    .all, .key(1, version: setSeq), .key(1, version: setSeq), .key(1, version: setSeq),
                    .key(2, version: twoSeq), .key(3, version: threeSeq), .key(2, version: twoSeq), .all,
                ])

            // The writer's own listener heard none of that: the next change it gets is the reader's.
            try await reader.setEntry(CacheEntry(value: "seven", storedAt: time), forKey: 7)
            let readerSeq = try await seq(client, reader, key: 7)
            #expect(try await writerHeard.changes.wait(forCount: 2) == [.all, .key(7, version: readerSeq)])
            await heard.stop()
            await writerHeard.stop()
        }
    }

    @Test func thePayloadIsTheDocumentedText() async throws {
        try await withClient { client in
            let writer = try await makeCache(client, instanceID: "writer-1.A_z")
            #expect(writer.instanceID == "writer-1.A_z")
            #expect(writer.notificationChannel == "storeflowable_" + writer.name)
            let payloads = try await client.withConnection { connection in
                try await connection.listen(on: writer.notificationChannel) { notifications in
                    let time = CacheTime(nanosecondsSince1970: 1)
                    try await writer.setEntry(CacheEntry(value: "v", storedAt: time), forKey: 1)
                    try await writer.invalidateEntry(forKey: 1)
                    try await writer.removeEntry(forKey: 1)
                    try await writer.setEntry(CacheEntry(value: "v", storedAt: time), forKey: 2)
                    try await writer.removeAllEntries()
                    var payloads: [String] = []
                    for try await notification in notifications {
                        payloads.append(notification.payload)
                        if payloads.count == 5 { break }
                    }
                    return payloads
                }
            }
            // Key 1 is `1` in JSON: base64 "MQ==". Its set, invalidation and removal carry one seq, its row's.
            let fields = payloads.map { $0.split(separator: " ").map(String.init) }
            #expect(fields.map(\.count) == [5, 5, 5, 5, 5])
            #expect(
                fields.map { $0.prefix(4).joined(separator: " ") } == [
                    "sf1 writer-1.A_z set k:MQ==", "sf1 writer-1.A_z invalidate k:MQ==",
                    "sf1 writer-1.A_z remove k:MQ==", "sf1 writer-1.A_z set k:Mg==", "sf1 writer-1.A_z remove *",
                ])
            #expect(fields[0][4] == fields[1][4] && fields[1][4] == fields[2][4])
            #expect(fields[4][4] == "0")
        }
    }

    @Test func anInvalidInstanceIDIsATypedError() async throws {
        try await withClient { client in
            for id in ["", "with space", String(repeating: "a", count: 65), "é"] {
                await #expect {
                    _ = try await makeCache(client, instanceID: id)
                } throws: { error in
                    if case .invalidInstanceID(id)? = error as? PostgresCacheError { true } else { false }
                }
            }
        }
    }

    @Test func writesThatChangeNoRowNotifyNothing() async throws {
        try await withClient { client in
            let name = uniqueName()
            let writer = try await makeCache(client, name: name)
            let heard = TestListener(try await makeCache(client, name: name))
            try await heard.waitUntilListening()
            let time = CacheTime(nanosecondsSince1970: 1)
            try await writer.removeAllEntries()  // empty table
            try await writer.removeEntry(forKey: 1)  // absent
            try await writer.invalidateEntry(forKey: 1)  // absent
            try await writer.invalidateEntries(where: { _ in true })  // nothing to mark
            try await writer.setEntry(CacheEntry(value: "v", storedAt: time, isInvalidated: true), forKey: 2)
            #expect(try await heard.changes.wait(forCount: 2).count == 2)
            try await writer.invalidateEntry(forKey: 2)  // already invalidated
            try await writer.invalidateEntries(where: { _ in true })  // already invalidated
            try await writer.setEntry(CacheEntry(value: "last", storedAt: time), forKey: 3)
            let lastSeq = try await seq(client, writer, key: 3)
            let changes = try await heard.changes.wait(forCount: 3)
            #expect(changes.last == .key(3, version: lastSeq))
            await heard.stop()
        }
    }

    @Test func anIdenticalRewriteRefreshesStoredAtWithoutNotifying() async throws {
        try await withClient { client in
            let name = uniqueName()
            let writer = try await makeCache(client, name: name)
            let other = try await makeCache(client, name: name)
            let heard = TestListener(try await makeCache(client, name: name))
            try await heard.waitUntilListening()
            let table = "storeflowable_cache_" + name

            try await writer.setEntry(CacheEntry(value: "v", storedAt: CacheTime(nanosecondsSince1970: 10)), forKey: 1)
            let firstSeq = try await seq(client, writer, key: 1)
            #expect(try await heard.changes.wait(forCount: 2).last == .key(1, version: firstSeq))

            // Another instance stores the same value it fetched later: only the time moves, silently,
            // with a new seq.
            try await other.setEntry(CacheEntry(value: "v", storedAt: CacheTime(nanosecondsSince1970: 20)), forKey: 1)
            #expect(
                try await writer.entry(forKey: 1)
                    == CacheEntry(value: "v", storedAt: CacheTime(nanosecondsSince1970: 20)))
            let refreshedSeq = try await seq(client, writer, key: 1)
            #expect(refreshedSeq > firstSeq)
            // An older time with the same value changes nothing at all.
            try await writer.setEntry(CacheEntry(value: "v", storedAt: CacheTime(nanosecondsSince1970: 15)), forKey: 1)
            #expect(try await scalar(client, "SELECT stored_at FROM \(unescaped: table)") == 20)
            #expect(try await seq(client, writer, key: 1) == refreshedSeq)

            // A new mark, a new value, another format: each is a change.
            try await other.setEntry(
                CacheEntry(value: "v", storedAt: CacheTime(nanosecondsSince1970: 20), isInvalidated: true), forKey: 1)
            let markSeq = try await seq(client, writer, key: 1)
            try await other.setEntry(CacheEntry(value: "w", storedAt: CacheTime(nanosecondsSince1970: 5)), forKey: 1)
            let valueSeq = try await seq(client, writer, key: 1)
            let newFormat = try await makeCache(client, name: name, valueFormat: 2)
            try await newFormat.setEntry(
                CacheEntry(value: "w", storedAt: CacheTime(nanosecondsSince1970: 5)), forKey: 1)
            let formatSeq = try await seq(client, writer, key: 1)
            let changes = try await heard.changes.wait(forCount: 5)
            #expect(
                changes == [
                    .all, .key(1, version: firstSeq), .key(1, version: markSeq), .key(1, version: valueSeq),
                    .key(1, version: formatSeq),
                ])
            await heard.stop()
        }
    }

    @Test func twoInstancesStoringTheSameValueAtOnceNotifyOnce() async throws {
        try await withClient { client in
            let name = uniqueName()
            let first = try await makeCache(client, name: name)
            let second = try await makeCache(client, name: name)
            let heard = TestListener(try await makeCache(client, name: name))
            try await heard.waitUntilListening()
            // Both instances missed the same keys, fetched the same values and store them at once.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for key in 0..<40 {
                    for (cache, time) in [(first, 10), (second, 20)] {
                        group.addTask {
                            try await cache.setEntry(
                                CacheEntry(value: "same", storedAt: CacheTime(nanosecondsSince1970: Int64(time))),
                                forKey: key)
                        }
                    }
                }
                try await group.waitForAll()
            }
            try await first.setEntry(
                CacheEntry(value: "last", storedAt: CacheTime(nanosecondsSince1970: 1)), forKey: 99)
            let changes = try await heard.changes.wait("key 99") { $0.contains { Self.key(of: $0) == 99 } }
            let keys = changes.compactMap(Self.key(of:))
            #expect(keys.count == 41)
            #expect(Set(keys) == Set(0..<40).union([99]))
            await heard.stop()
        }
    }

    @Test func aFailedWriteAndARolledBackStatementNotifyNothing() async throws {
        try await withClient { client in
            let name = uniqueName()
            let writer = try await makeCache(client, name: name)
            let heard = TestListener(try await makeCache(client, name: name))
            try await heard.waitUntilListening()
            let table = "storeflowable_cache_" + name
            let time = CacheTime(nanosecondsSince1970: 1)
            // Refused at once by a CHECK constraint: the statement fails before it notifies.
            try await execute(
                client,
                "ALTER TABLE \(unescaped: table) ADD CONSTRAINT no_refused CHECK (value <> '\"refused\"'::bytea)")
            // Refused at commit by a deferred constraint trigger: the statement ran, its pg_notify
            // included, and the transaction then rolled back.
            try await execute(
                client,
                """
                CREATE FUNCTION \(unescaped: name)_reject() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF NEW.value = '"rolled back"'::bytea THEN RAISE EXCEPTION 'rejected at commit'; END IF;
                    RETURN NULL;
                END $$
                """)
            try await execute(
                client,
                """
                CREATE CONSTRAINT TRIGGER reject AFTER INSERT OR UPDATE ON \(unescaped: table)
                    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION \(unescaped: name)_reject()
                """)
            await #expect(throws: PostgresCacheError.self) {
                try await writer.setEntry(CacheEntry(value: "refused", storedAt: time), forKey: 1)
            }
            // postgres-nio 1.33 reports an error that arrives after the statement's rows (here, at its
            // commit) to the connection's next query, not to the statement, so the write may not throw:
            // it runs on a client of its own, whose broken connection no other query of the test uses.
            try await withClient { writerClient in
                let rolledBack = try await makeCache(writerClient, name: name)
                try? await rolledBack.setEntry(CacheEntry(value: "rolled back", storedAt: time), forKey: 1)
            }
            #expect(try await scalar(client, "SELECT count(*) FROM \(unescaped: table)") == 0)
            try await writer.setEntry(CacheEntry(value: "kept", storedAt: time), forKey: 2)
            let keptSeq = try await seq(client, writer, key: 2)
            #expect(try await heard.changes.wait(forCount: 2) == [.all, .key(2, version: keptSeq)])
            await heard.stop()
        }
    }

    @Test func aLongKeyIsNotifiedByItsHashWhichKeyHashComputes() async throws {
        try await withClient { client in
            let name = uniqueName()
            try await PostgresCacheSchema.migrate(name: name, client: client)
            let writer = try await PostgresCache<String, String>(name: name, client: client, coder: RawStringCoder())
            let reader = try await PostgresCache<String, String>(name: name, client: client, coder: RawStringCoder())
            // The published FNV-1a 64 test vectors.
            #expect(try reader.keyHash(forKey: "") == 0xcbf2_9ce4_8422_2325)
            #expect(try reader.keyHash(forKey: "a") == 0xaf63_dc4c_8601_ec8c)
            #expect(try reader.keyHash(forKey: "foobar") == 0x8594_4171_f739_67e8)

            let heard = TestListener(reader)
            try await heard.waitUntilListening()
            let time = CacheTime(nanosecondsSince1970: 1)
            let fits = String(repeating: "k", count: 5_000)  // 6,668 bytes of base64: sent as the key
            let long = String(repeating: "k", count: 6_000)  // 8,000 bytes of base64: sent as the hash
            try await writer.setEntry(CacheEntry(value: "v", storedAt: time), forKey: fits)
            try await writer.setEntry(CacheEntry(value: "v", storedAt: time), forKey: long)
            let changes = try await heard.changes.wait(forCount: 3)
            guard case .key(fits, _) = changes[1], case .keyHash(let hash, _) = changes[2] else {
                Issue.record("unexpected changes \(changes.map { String(describing: $0).prefix(80) })")
                return
            }
            #expect(hash == (try reader.keyHash(forKey: long)))
            #expect(hash != (try reader.keyHash(forKey: fits)))
            await heard.stop()
        }
    }

    @Test func aMalformedNotificationIsIgnoredAndReported() async throws {
        try await withClient { client in
            let name = uniqueName()
            let events = Recorder<PostgresCacheEvent>()
            let writer = try await makeCache(client, name: name)
            let heard = TestListener(try await makeCache(client, name: name, events: events.record))
            try await heard.waitUntilListening()
            let channel = writer.notificationChannel
            let notAnInt = Data("abc".utf8).base64EncodedString()
            let malformed = [
                "garbage", "sf1 a set k:!!! 1", "sf1 a set k:\(notAnInt) 1", "sf2 a set * 0", "sf1 a drop * 0",
                "sf1 a set h:123 1", "sf1 a set k:MQ== -1", "sf1 a set k:MQ== 1 extra", "",
            ]
            for payload in malformed {
                try await execute(client, "SELECT pg_notify(\(channel), \(payload))")
            }
            try await writer.setEntry(CacheEntry(value: "v", storedAt: CacheTime(nanosecondsSince1970: 1)), forKey: 1)
            let changes = try await heard.changes.wait(forCount: 2)
            #expect(changes.count == 2 && changes.last.map { if case .key(1, _) = $0 { true } else { false } } == true)
            let reported = events.elements.compactMap { event -> String? in
                if case .malformedNotification(let payload, _) = event { payload } else { nil }
            }
            #expect(reported == malformed)
            await heard.stop()
        }
    }

    @Test func invalidatingManyKeysAtOnceSendsOneNotificationForAll() async throws {
        try await withClient { client in
            let name = uniqueName()
            let writer = try await makeCache(client, name: name)
            let heard = TestListener(try await makeCache(client, name: name))
            try await heard.waitUntilListening()
            let time = CacheTime(nanosecondsSince1970: 1)
            for key in 0..<101 { try await writer.setEntry(CacheEntry(value: "v", storedAt: time), forKey: key) }
            try await heard.changes.wait(forCount: 102)
            try await writer.invalidateEntries(where: { _ in true })
            try await writer.setEntry(CacheEntry(value: "last", storedAt: time), forKey: 500)
            let changes = try await heard.changes.wait(forCount: 104)
            #expect(changes[102] == .all)
            #expect(changes[103] == .key(500, version: try await seq(client, writer, key: 500)))
            await heard.stop()
        }
    }

    @Test func aSlowHandlerLosesNoNotification() async throws {
        try await withClient { client in
            let name = uniqueName()
            let writer = try await makeCache(client, name: name)
            let released = Recorder<Bool>()
            let handled = Recorder<PostgresCacheChange<Int>>()
            let heard = TestListener(try await makeCache(client, name: name)) { change in
                if case .key(0, _) = change { _ = try? await released.wait("released", until: { !$0.isEmpty }) }
                handled.record(change)
            }
            try await heard.waitUntilListening()
            let time = CacheTime(nanosecondsSince1970: 1)
            for key in 0...50 { try await writer.setEntry(CacheEntry(value: "v", storedAt: time), forKey: key) }
            // The handler is still busy with key 0: nothing after it was handed over.
            try await heard.changes.wait(forCount: 2)
            #expect(heard.changes.elements.count == 2)
            released.record(true)
            let all = try await handled.wait(forCount: 52)
            let keys = all.compactMap { change -> Int? in if case .key(let key, _) = change { key } else { nil } }
            #expect(keys == Array(0...50))
            await heard.stop()
        }
    }

    /// The key of a change for one key, else `nil`.
    private static func key(of change: PostgresCacheChange<Int>) -> Int? {
        if case .key(let key, _) = change { key } else { nil }
    }

    /// The `seq` of `key`'s row.
    private func seq(_ client: PostgresClient, _ cache: PostgresCache<Int, String>, key: Int) async throws -> Int64 {
        let table = "storeflowable_cache_" + cache.name
        let found = try await scalar(client, "SELECT seq FROM \(unescaped: table) WHERE key = \(Data("\(key)".utf8))")
        return try #require(found)
    }
}
