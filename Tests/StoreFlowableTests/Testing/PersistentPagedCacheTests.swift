import StoreFlowable
import StoreFlowableTesting
import Testing

/// A message held by reference, to tell a decoded copy from the saved instance.
private final class Message: Codable, Sendable, Equatable {
    let id: Int
    let text: String

    init(id: Int, text: String) {
        self.id = id
        self.text = text
    }

    static func == (lhs: Message, rhs: Message) -> Bool { lhs.id == rhs.id && lhs.text == rhs.text }
}

/// A cursor whose `Codable` conformance leaves out its token, as a careless hand-written one might.
private struct LossyCursor: Codable, Sendable, Hashable {
    var page: Int
    var token = ""

    enum CodingKeys: String, CodingKey {
        case page
    }
}

/// A value that writes a string and reads back a number: its `Codable` conformance is broken.
private struct Asymmetric: Codable, Sendable {
    init() {}

    init(from decoder: any Decoder) throws {
        _ = try decoder.singleValueContainer().decode(Int.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode("not a number")
    }
}

/// A value that writes a number too large for the type it reads back.
private struct Narrowing: Codable, Sendable {
    init() {}

    init(from decoder: any Decoder) throws {
        _ = try decoder.singleValueContainer().decode(UInt8.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(300)
    }
}

/// Every shape of value a `Codable` conformance can produce.
private struct Rich: Codable, Sendable, Equatable {
    enum Kind: Codable, Sendable, Equatable {
        case plain
        case tagged(label: String, weight: Double)
    }

    /// A value coded by hand through nested containers and a super encoder.
    struct Manual: Codable, Sendable, Equatable {
        var name: String
        var scores: [Int]
        var parent: String

        enum CodingKeys: String, CodingKey {
            case info
            case scores
        }

        enum InfoKeys: String, CodingKey {
            case name
        }

        init(name: String, scores: [Int], parent: String) {
            self.name = name
            self.scores = scores
            self.parent = parent
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let info = try container.nestedContainer(keyedBy: InfoKeys.self, forKey: .info)
            name = try info.decode(String.self, forKey: .name)
            var scoresContainer = try container.nestedUnkeyedContainer(forKey: .scores)
            var scores: [Int] = []
            while !scoresContainer.isAtEnd {
                scores.append(try scoresContainer.decode(Int.self))
            }
            self.scores = scores
            parent = try container.superDecoder().singleValueContainer().decode(String.self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            var info = container.nestedContainer(keyedBy: InfoKeys.self, forKey: .info)
            try info.encode(name, forKey: .name)
            var scoresContainer = container.nestedUnkeyedContainer(forKey: .scores)
            for score in scores { try scoresContainer.encode(score) }
            var parentContainer = container.superEncoder().singleValueContainer()
            try parentContainer.encode(parent)
        }
    }

    var int = Int.min
    var negative: Int64 = -42
    var big = UInt64.max
    var small: UInt8 = 255
    var double = 0.1
    var tiny = 1e-300
    var float: Float = 0.1
    var flag = true
    var text = "héllo, 世界 👋"
    var missing: String? = nil
    var present: String? = "here"
    var optionals: [Int?] = [1, nil, 3]
    var nested: [[String]] = [["a"], [], ["b", "c"]]
    var byName: [String: Int] = ["one": 1, "two": 2]
    var byNumber: [Int: String] = [1: "one", 2: "two"]
    var kinds: [Kind] = [.plain, .tagged(label: "x", weight: 2.5)]
    var manual = Manual(name: "m", scores: [3, 1, 2], parent: "base")
}

@Suite(.timeLimit(.minutes(1)))
struct PersistentPagedCacheTests {
    @Test func anEmptyCacheLoadsNothing() async throws {
        let cache = PersistentPagedCache<[Int], Int>()
        #expect(try await cache.load() == nil)
        #expect(cache.isEmpty)
        #expect(cache.readCount == 1)
        #expect(cache.writeCount == 0)
    }

    @Test func aSavedRecordLoadsBackWithBothCursors() async throws {
        let cache = PersistentPagedCache<[String], Int>()
        let record = PagedData(data: ["a", "b"], nextCursor: 3, prevCursor: 0)
        try await cache.save(record)
        #expect(try await cache.load() == record)
        #expect(try await cache.load() == record)
        #expect(cache.writeCount == 1)
        #expect(cache.readCount == 2)
        #expect(!cache.isEmpty)
    }

    @Test func nilCursorsStayNil() async throws {
        let cache = PersistentPagedCache<[Int], Int>()
        try await cache.save(PagedData(data: [1], nextCursor: nil))
        let loaded = try #require(try await cache.load())
        #expect(loaded.nextCursor == nil)
        #expect(loaded.prevCursor == nil)
        try await cache.save(PagedData(data: [], nextCursor: 0))
        #expect(try await cache.load() == PagedData(data: [], nextCursor: 0))
    }

    @Test func listCursorsSurviveTheRoundTripAndStillWorkWithTheirAPI() async throws {
        let api = CursorListAPI(items: Array(1...25), pageSize: 10)
        let latest = try await api.latestPage()
        let cache = PersistentPagedCache<[Int], ListCursor>()
        try await cache.save(latest)
        let loaded = try #require(try await cache.load())
        #expect(loaded == latest)
        let olderCursor = try #require(loaded.prevCursor)
        #expect(try await api.olderPage(before: olderCursor).data == Array(6...15))
        api.append(contentsOf: [26])
        #expect(try await api.newerPage(after: try #require(loaded.nextCursor)).data == [26])
    }

    @Test func everyLoadDecodesANewValue() async throws {
        let cache = PersistentPagedCache<[Message], Int>()
        let saved = Message(id: 1, text: "hi")
        try await cache.save(PagedData(data: [saved], nextCursor: 2))
        let first = try #require(try await cache.load()?.data.first)
        let second = try #require(try await cache.load()?.data.first)
        #expect(first == saved)
        #expect(first !== saved)
        #expect(first !== second)
    }

    @Test func aCursorFieldLeftOutOfItsCodableConformanceIsLost() async throws {
        let cursor = LossyCursor(page: 2, token: "secret")
        let inMemory = InMemoryCache<PagedData<[Int], LossyCursor>>()
        try await inMemory.save(PagedData(data: [1], nextCursor: cursor))
        #expect(try await inMemory.load()?.nextCursor == cursor)
        let persistent = PersistentPagedCache<[Int], LossyCursor>()
        try await persistent.save(PagedData(data: [1], nextCursor: cursor))
        #expect(try await persistent.load()?.nextCursor == LossyCursor(page: 2, token: ""))
    }

    @Test func savingNilDeletesTheRecordAndCountsAsAWrite() async throws {
        let cache = PersistentPagedCache<[Int], Int>()
        try await cache.save(PagedData(data: [1], nextCursor: 1))
        try await cache.save(nil)
        #expect(cache.isEmpty)
        #expect(try await cache.load() == nil)
        #expect(cache.writeCount == 2)
    }

    @Test func anInitialRecordIsNeitherAWriteNorARead() async throws {
        let record = PagedData(data: [1, 2], nextCursor: 1)
        let cache = try PersistentPagedCache<[Int], Int>(record)
        #expect(try cache.contents() == record)
        #expect(cache.writeCount == 0)
        #expect(cache.readCount == 0)
        #expect(try await cache.load() == record)
        #expect(cache.readCount == 1)
        #expect(try PersistentPagedCache<[Int], Int>(nil).isEmpty)
    }

    @Test func aScriptedReadFailureIsThrownAndCounted() async throws {
        let cache = try PersistentPagedCache<[Int], Int>(PagedData(data: [1], nextCursor: nil))
        cache.failReads(with: TestError("disk"))
        await #expect(throws: TestError("disk")) { try await cache.load() }
        #expect(cache.readCount == 1)
        #expect(try cache.contents() == PagedData(data: [1], nextCursor: nil))
        cache.failReads(with: nil)
        #expect(try await cache.load() == PagedData(data: [1], nextCursor: nil))
        #expect(cache.readCount == 2)
    }

    @Test func aFailedWriteLeavesTheStoredRecordAlone() async throws {
        let cache = try PersistentPagedCache<[Int], Int>(PagedData(data: [1], nextCursor: 1))
        cache.failWrites(with: TestError("full"))
        await #expect(throws: TestError("full")) { try await cache.save(PagedData(data: [2], nextCursor: nil)) }
        await #expect(throws: TestError("full")) { try await cache.save(nil) }
        #expect(try await cache.load() == PagedData(data: [1], nextCursor: 1))
        #expect(cache.writeCount == 0)
        cache.failWrites(with: nil)
        try await cache.save(PagedData(data: [2], nextCursor: nil))
        #expect(try await cache.load() == PagedData(data: [2], nextCursor: nil))
        #expect(cache.writeCount == 1)
    }

    @Test func aRecordThatCannotReadBackWhatItWroteFailsToLoad() async throws {
        let asymmetric = PersistentPagedCache<[Asymmetric], Int>()
        try await asymmetric.save(PagedData(data: [Asymmetric()], nextCursor: nil))
        await #expect(throws: DecodingError.self) { try await asymmetric.load() }
        let narrowing = PersistentPagedCache<Narrowing, Int>()
        try await narrowing.save(PagedData(data: Narrowing(), nextCursor: nil))
        await #expect(throws: DecodingError.self) { try await narrowing.load() }
    }

    @Test func everyShapeOfCodableValueRoundTrips() async throws {
        let cache = PersistentPagedCache<Rich, Rich.Kind>()
        let record = PagedData<Rich, Rich.Kind>(
            data: Rich(), nextCursor: .tagged(label: "next", weight: -1.5), prevCursor: .plain)
        try await cache.save(record)
        let loaded = try #require(try await cache.load())
        #expect(loaded == record)
        #expect(loaded.data.missing == nil)
        #expect(loaded.data.optionals == [1, nil, 3])
    }
}
