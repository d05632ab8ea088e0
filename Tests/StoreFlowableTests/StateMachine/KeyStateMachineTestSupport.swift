import Testing

@testable import StoreFlowable

/// Comparable renderings and scenario fixtures for the pure tests of ``KeyStateMachine``.
///
/// Everything lives in this namespace so that the names cannot clash with the store tests of the
/// same target.
enum MachineTest {
    /// The machine under test: `String` data, plain integers for waiters, subscribers and writers.
    typealias Machine = KeyStateMachine<String, Int, Int, Int, Int>

    /// The subscriber a start state may already hold.
    static let s0 = subscriber(0)
    /// The subscriber a scenario attaches.
    static let s1 = subscriber(1)
    /// The waiter a start state may already hold.
    static let w0 = waiter(0)
    /// The waiter a scenario adds.
    static let w1 = waiter(1)

    /// A machine with one subscriber (``s1``) whose first read found `content` valid.
    static func subscribed(content: String = "v") -> Machine {
        var machine = Machine()
        let (id, version) = machine.subscribe(s1)
        _ = machine.initialRead(subscriber: id, version: version, cached: content, isValid: true, forceRefresh: false)
        return machine
    }

    /// The state `action` emits, rendered, or `nil` when it emits none.
    static func emitted(_ action: Machine.Action) -> Emitted? {
        action.emission.map { Emitted($0.state) }
    }

    /// The integer that stands for the `n`-th subscriber of a simulation.
    static func subscriber(_ n: Int) -> Int { 100 + n }
    /// The integer that stands for the `n`-th waiter of a simulation.
    static func waiter(_ n: Int) -> Int { 200 + n }

    /// An error with a name, so that tests can say which failure reached whom.
    struct Failure: Error, Equatable {
        let name: String

        /// The origin failed.
        static let fetch = Failure(name: "fetch")
        /// Writing a fetched value to the cache failed.
        static let save = Failure(name: "save")
        /// Writing an update to the cache failed.
        static let write = Failure(name: "write")
        /// The failure a start state remembers.
        static let setup = Failure(name: "setup")
        /// A cancelled flight's task ends by throwing a cancellation (or never calls the origin).
        static let cancelled = Failure(name: "cancelled")
    }

    /// The name a rendering gives to an error.
    static func name(of error: any Error) -> String {
        (error as? Failure)?.name ?? "\(type(of: error))"
    }

    /// A `LoadingState<String>` rendered to something `Equatable`.
    enum Emitted: Equatable, CustomStringConvertible {
        case loading(String?)
        case completed(String)
        case error(String?, String)
        /// A state a non-paginated machine must never produce.
        case unexpected(String)

        init(_ state: LoadingState<String>) {
            switch state {
            case .loading(let content):
                self = .loading(content)
            case .completed(let content, let next, let prev):
                if case .fixed(canRequestAdditionalData: false) = next,
                    case .fixed(canRequestAdditionalData: false) = prev
                {
                    self = .completed(content)
                } else {
                    self = .unexpected("completed(\(content)) with paging states")
                }
            case .error(let content, let error):
                self = .error(content, MachineTest.name(of: error))
            }
        }

        /// The content the state carries.
        var content: String? {
            switch self {
            case .loading(let content): content
            case .completed(let content): content
            case .error(let content, _): content
            case .unexpected: nil
            }
        }

        var description: String {
            switch self {
            case .loading(let content): "loading(\(content ?? "nil"))"
            case .completed(let content): "completed(\(content))"
            case .error(let content, let error): "error(\(content ?? "nil"), \(error))"
            case .unexpected(let text): "unexpected(\(text))"
            }
        }
    }

    /// What a waiter was resolved with.
    enum Resolution: Hashable, CustomStringConvertible {
        case value(String)
        case failure(String)

        init(_ result: Result<String, any Error>) {
            switch result {
            case .success(let value): self = .value(value)
            case .failure(let error): self = .failure(MachineTest.name(of: error))
            }
        }

        var description: String {
            switch self {
            case .value(let value): "value(\(value))"
            case .failure(let error): "failure(\(error))"
            }
        }
    }

    /// A `DataState` rendered to something `Equatable`.
    enum Status: Equatable {
        case fixed
        case loading
        case error(String)

        init(_ state: DataState) {
            switch state {
            case .fixed: self = .fixed
            case .loading: self = .loading
            case .error(let error): self = .error(MachineTest.name(of: error))
            }
        }
    }

    /// Every effect the machine asked for since the log was last cleared, by who receives it.
    struct Log: Equatable {
        /// The states each subscriber received, in order.
        var emissions: [Int: [Emitted]] = [:]
        /// What each waiter was resolved with.
        var resolutions: [Int: Resolution] = [:]
        /// Flights started, by label, in order.
        var started: [String] = []
        /// Flights cancelled, by label, in order.
        var cancelled: [String] = []
        /// Writers granted the write turn, by label, in order.
        var granted: [String] = []
        /// Writers rejected, by label, in order.
        var rejected: [String] = []

        mutating func emit(_ subscriber: Int, _ states: Emitted...) {
            emissions[subscriber, default: []].append(contentsOf: states)
        }
    }

    /// The observable outcome of a scenario: its effects and the machine's final state.
    struct Snapshot: Equatable {
        var log = Log()
        var status = Status.fixed
        var content: String?
        var isIdle = false
        /// What the simulated cache holds at the end.
        var cache: String?

        /// Records how a flight ended for `audience` and sets the final state accordingly.
        ///
        /// - Parameters:
        ///   - end: How the flight ended.
        ///   - audience: The subscribers that receive the outcome.
        ///   - waiters: The waiters resolved with it.
        ///   - content: The content the machine held before the outcome.
        mutating func settle(_ end: FlightEnd, audience: [Int], waiters: [Int] = [], content: String?) {
            for subscriber in audience { log.emit(subscriber, end.state(content: content)) }
            for waiter in waiters { log.resolutions[waiter] = end.resolution }
            switch end {
            case .saved(let value):
                status = .fixed
                self.content = audience.isEmpty ? nil : value
                cache = value
            case .failed(let error):
                status = .error(error)
                self.content = audience.isEmpty ? nil : content
            }
        }
    }

    /// How a flight ends.
    enum FlightEnd {
        case saved(String)
        case failed(String)

        /// The end of a flight that has still to call the origin, which returns `value` on success.
        static func fetching(_ outcome: Outcome, value: String) -> FlightEnd {
            switch outcome {
            case .fetchSuccess: .saved(value)
            case .fetchFailure: .failed(Failure.fetch.name)
            case .saveFailure: .failed(Failure.save.name)
            }
        }

        /// The end of a flight whose origin already returned `value`: only its save can fail.
        static func fetched(_ outcome: Outcome, value: String) -> FlightEnd {
            outcome == .saveFailure ? .failed(Failure.save.name) : .saved(value)
        }

        /// The state subscribers receive, given the content the machine held.
        func state(content: String?) -> Emitted {
            switch self {
            case .saved(let value): .completed(value)
            case .failed(let error): .error(content, error)
            }
        }

        var resolution: Resolution {
            switch self {
            case .saved(let value): .value(value)
            case .failed(let error): .failure(error)
            }
        }

        var isSaved: Bool {
            if case .saved = self { return true }
            return false
        }
    }

    /// How the origin calls and cache writes of flights go while a scenario drains.
    enum Outcome: CaseIterable, Sendable {
        /// The origin returns and the value is cached.
        case fetchSuccess
        /// The origin throws.
        case fetchFailure
        /// The origin returns but writing the value to the cache throws.
        case saveFailure
    }

    /// What the cache holds when a scenario's request reads it.
    enum Cache: CaseIterable, Sendable {
        case none
        case valid
        case stale

        var value: String? {
            switch self {
            case .none: nil
            case .valid: "cached"
            case .stale: "stale"
            }
        }

        var isValid: Bool { self == .valid }
    }

    /// Where a scenario starts. Setup reads see `"old"`; the setup flight F0 returns `"f0"`, and the
    /// setup update U0 writes `"u0"` (or, in `awaitingWriteBehindClear`, clears the cache).
    enum Start: CaseIterable, Sendable {
        /// Nobody holds the key.
        case fixed
        /// S0 is attached and saw `.completed("old")`.
        case fixedSubscribed
        /// S0 saw `.loading("old")`; W0 waits for flight F0, which is calling the origin.
        case fetching
        /// S0 is attached; U0 holds the write turn; W0 waits for F0, which returned and waits its turn.
        /// F0 began while U0 was writing, so U0 supersedes it when it finishes (update wins).
        case awaitingWrite
        /// As `awaitingWrite`, but U0 is a clear (`update(nil)`): F0 is wanted after it and gets the turn.
        case awaitingWriteBehindClear
        /// S0 saw `.loading("old")`; W0 waits for F0, which is writing its value to the cache.
        case saving
        /// S0 saw `.error("old", setup)`; F0 failed and the machine remembers the error.
        case failed

        /// Whether S0 is attached in this start state.
        var hasSubscriber: Bool { self != .fixed }

        /// Whether the start state has a flight (F0).
        var hasFlight: Bool { self == .fetching || isAwaitingWrite || self == .saving }

        /// Whether F0 returned and waits for U0's write turn in this start state.
        var isAwaitingWrite: Bool { self == .awaitingWrite || self == .awaitingWriteBehindClear }

        /// A simulation in this start state, with an empty log and the cache set to `cache`.
        func build(cache: Cache) -> Sim {
            var sim = Sim()
            switch self {
            case .fixed:
                break
            case .fixedSubscribed:
                sim.cache = ("old", true)
                _ = sim.publish()
            case .fetching, .saving, .failed:
                sim.cache = ("old", false)
                _ = sim.publish()
                _ = sim.request(.refresh)
                if self == .saving { sim.completeFetch(0, with: .success("f0")) }
                if self == .failed { sim.completeFetch(0, with: .failure(.setup)) }
            case .awaitingWrite, .awaitingWriteBehindClear:
                sim.cache = ("old", true)
                _ = sim.publish()
                _ = sim.beginUpdate(self == .awaitingWrite ? "u0" : nil)
                _ = sim.request(.refresh)
                sim.completeFetch(0, with: .success("f0"))
            }
            sim.beginScenario()
            sim.cache = (cache.value, cache.isValid)
            return sim
        }
    }

    /// A call of the store that reads, in the form it reaches the machine.
    enum Read: CaseIterable, Sendable {
        /// `getData(from: .both)` / `requireData(from: .both)`: joins only when the cache is invalid.
        case both
        /// `getData(from: .origin)` / `requireData(from: .origin)`: always joins.
        case origin
        /// `validate()`: joins only when the cache is invalid.
        case validate
        /// `refresh()`: always joins.
        case refresh

        /// Whether the store joins the key's flight when the cache holds `cache`.
        func joins(_ cache: Cache) -> Bool {
            switch self {
            case .both, .validate: !cache.isValid
            case .origin, .refresh: true
            }
        }
    }

    /// Checks `actual` against `expected` field by field, so a failure names what differs.
    static func expectMatch(
        _ actual: Snapshot, _ expected: Snapshot, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(actual.log.emissions == expected.log.emissions, "emissions", sourceLocation: sourceLocation)
        #expect(actual.log.resolutions == expected.log.resolutions, "resolutions", sourceLocation: sourceLocation)
        #expect(actual.log.started == expected.log.started, "started flights", sourceLocation: sourceLocation)
        #expect(actual.log.cancelled == expected.log.cancelled, "cancelled flights", sourceLocation: sourceLocation)
        #expect(actual.log.granted == expected.log.granted, "granted writers", sourceLocation: sourceLocation)
        #expect(actual.log.rejected == expected.log.rejected, "rejected writers", sourceLocation: sourceLocation)
        #expect(actual.status == expected.status, "status", sourceLocation: sourceLocation)
        #expect(actual.content == expected.content, "content", sourceLocation: sourceLocation)
        #expect(actual.isIdle == expected.isIdle, "isIdle", sourceLocation: sourceLocation)
        #expect(actual.cache == expected.cache, "cache", sourceLocation: sourceLocation)
    }
}
