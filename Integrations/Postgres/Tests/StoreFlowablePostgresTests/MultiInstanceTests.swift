import PostgresNIO
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Two or more server instances, each a process of its own (`postgres-cache-instance`), sharing one
/// `PostgresCache`: what one writes the others read, a crash of one mid-write leaves a whole value, and
/// a restart of PostgreSQL under them fails their commands promptly, after which they work again.
///
/// The tests wait for the instances' answer lines (each wait with a deadline), never for time to pass.
/// They run one at a time: each starts a server (initdb) and two processes, and all four at once load a
/// two-core machine enough to push the other suites' tight timeouts (900 ms statement timeouts on the
/// shared server) over.
@Suite(.serialized) struct MultiInstanceTests {
    @Test(.timeLimit(.minutes(2)))
    func anUpdateThroughOneInstanceIsReadThroughAnotherFromTheSharedCache() async throws {
        let fleet = try await InstanceFleet.start(["A", "B"], delay: .milliseconds(300))
        let (a, b) = (fleet[0], fleet[1])

        #expect(try await a.ask("update k1 fromA", answers: ["updated k1", "error k1 "]) == "updated k1")
        #expect(try await b.ask("get k1", answers: ["got k1 ", "error k1 "]) == "got k1 fromA")
        #expect(try await fleet.originCalls(for: "k1") == 0)

        // Five concurrent reads in B make one origin call (its own single flight); A then reads the
        // value B's origin call stored, without calling the origin.
        try b.send("gets k2 5")
        var answers: [String] = []
        for _ in 0..<5 { answers.append(try await b.line { $0.hasPrefix("got k2 ") || $0.hasPrefix("error k2 ") }) }
        #expect(answers == Array(repeating: "got k2 k2@B#1", count: 5))
        #expect(try await fleet.originCalls(for: "k2") == 1)
        #expect(try await a.ask("get k2", answers: ["got k2 ", "error k2 "]) == "got k2 k2@B#1")
        #expect(try await fleet.originCalls(for: "k2") == 1)

        try await fleet.terminate()
    }

    @Test(.timeLimit(.minutes(2)))
    func anUpdateThroughOneInstanceReachesAnotherInstancesSubscriber() async throws {
        let fleet = try await InstanceFleet.start(["A", "B"])
        let (a, b) = (fleet[0], fleet[1])
        // Lines that are no command are answered, and the instance goes on.
        for line in ["frobnicate k", "get", "gets k 0", "update k", "ping now"] {
            #expect(try await a.ask(line, answers: ["bad "]) == "bad \(line)")
        }

        try a.send("subscribe k")
        #expect(try await a.line(startingWith: "state k completed ") == "k@A#1")
        #expect(try await b.ask("update k fromB", answers: ["updated k", "error k "]) == "updated k")
        // B's write notified A, whose listener reloaded the key: no command to A.
        _ = try await a.line { $0 == "state k completed fromB" }
        #expect(try await fleet.originCalls(for: "k") == 1)
        #expect(try await a.ask("unsubscribe k", answers: ["unsubscribed k"]) == "unsubscribed k")

        try await fleet.terminate()
    }

    @Test(.timeLimit(.minutes(2)))
    func anInstanceKilledMidWriteLeavesAWholeValueAndAConsistentTable() async throws {
        let fleet = try await InstanceFleet.start(["A", "B"])
        let (a, b) = (fleet[0], fleet[1])

        // A writes 1, 2, 3, … one after another (each a read and an upsert) and is killed at once
        // after its 50th acknowledged write, most likely with the next one in flight.
        try a.send("updates k 1000000")
        _ = try await a.line { $0 == "updated k 50" }
        #expect(try await a.kill(SIGKILL) == 128 + SIGKILL)
        // Every line A printed has been read once it is reaped.
        let acknowledged =
            a.output.lines.compactMap { line in
                line.hasPrefix("updated k ") ? Int(line.dropFirst("updated k ".count)) : nil
            }.max() ?? 0
        #expect(acknowledged >= 50)

        // The last acknowledged value, or the one in flight if its statement committed: never a mix.
        let answer = try await b.ask("get k", answers: ["got k ", "error k "])
        let value = Int(answer.dropFirst("got k ".count))
        #expect(
            answer.hasPrefix("got k ") && (value == acknowledged || value == acknowledged + 1),
            "B read \(answer) after A acknowledged \(acknowledged)")
        #expect(try await fleet.originCalls(for: "k") == 0)
        try await expectConsistentTable(fleet)

        try await fleet.terminate()
    }

    @Test(.timeLimit(.minutes(2)))
    func commandsDuringAServerRestartFailPromptlyAndBothInstancesWorkAgainAfterIt() async throws {
        let fleet = try await InstanceFleet.start(["A", "B"], timeout: .seconds(2))
        let (a, b) = (fleet[0], fleet[1])
        #expect(try await a.ask("update k before", answers: ["updated k", "error k "]) == "updated k")
        #expect(try await b.ask("get k", answers: ["got k ", "error k "]) == "got k before")

        try await fleet.server.stop()
        let clock = ContinuousClock()
        let start = clock.now
        // Each command's database operations are bounded by the instances' 2-second timeout: a read
        // and the origin's statement for a get, a read for an update, one statement for an invalidation.
        try a.send("get down1")
        try a.send("invalidate k")
        try b.send("update k during")
        try b.send("get down2")
        _ = try await a.line(startingWith: "error down1 ", timeout: .seconds(15))
        _ = try await a.line(startingWith: "error k ", timeout: .seconds(15))
        _ = try await b.line(startingWith: "error k ", timeout: .seconds(15))
        _ = try await b.line(startingWith: "error down2 ", timeout: .seconds(15))
        #expect(clock.now - start < .seconds(12))
        #expect(try await a.ask("ping", answers: ["pong"]) == "pong")
        #expect(try await b.ask("ping", answers: ["pong"]) == "pong")

        try await fleet.server.start()
        // Each client's pool reconnects on its own, after its back-off: retry until a write goes through.
        try await waitUntilWorking(a, probe: "probe-a")
        try await waitUntilWorking(b, probe: "probe-b")
        #expect(try await a.ask("update k2 after", answers: ["updated k2", "error k2 "]) == "updated k2")
        #expect(try await b.ask("get k2", answers: ["got k2 ", "error k2 "]) == "got k2 after")
        // What was committed before the stop survived it, and nothing written during it applied.
        #expect(try await a.ask("get k", answers: ["got k ", "error k "]) == "got k before")
        #expect(try await fleet.originCalls(for: "down1") == 0)
        #expect(try await fleet.originCalls(for: "down2") == 0)
        // The listeners reconnected too: a change through A reaches B's subscriber again.
        _ = try await b.line { $0.hasPrefix("event listener disconnected") }
        try b.send("subscribe k2")
        #expect(try await b.line(startingWith: "state k2 completed ") == "after")
        #expect(try await a.ask("update k2 changed", answers: ["updated k2", "error k2 "]) == "updated k2")
        _ = try await b.line(timeout: .seconds(30)) { $0 == "state k2 completed changed" }

        try await fleet.terminate()
    }

    @Test(.timeLimit(.minutes(2)))
    func aBurstOfMissesOnThreeInstanceProcessesCallsTheOriginOnce() async throws {
        let fleet = try await InstanceFleet.start(["A", "B", "C"], delay: .milliseconds(300))
        // 102 concurrent reads of one missing key, 34 in each process.
        for index in 0..<3 { try fleet[index].send("gets hot 34") }
        var values: Set<String> = []
        for index in 0..<3 {
            for _ in 0..<34 {
                let answer = try await fleet[index].line { $0.hasPrefix("got hot ") || $0.hasPrefix("error hot ") }
                values.insert(answer)
            }
        }
        #expect(values.count == 1 && values.first?.hasPrefix("got hot hot@") == true, "\(values)")
        #expect(try await fleet.originCalls(for: "hot") == 1)
        try await fleet.terminate()
    }

    @Test(.timeLimit(.minutes(2)))
    func anInstanceKilledWhileHoldingAClaimDelaysTheKeyOnlyForItsLease() async throws {
        let fleet = try await InstanceFleet.start(
            ["A", "B"], lease: .seconds(2), delays: ["A": .seconds(3600), "B": .zero])
        let (a, b) = (fleet[0], fleet[1])
        try a.send("get k")
        // Events name keys by their encoded bytes: a JSON string.
        _ = try await a.line { $0 == #"flight claimed "k""# }
        #expect(try await a.kill(SIGKILL) == 128 + SIGKILL)
        // B waits for the dead holder's claim, takes it over once its lease ends, and fetches.
        let clock = ContinuousClock()
        let start = clock.now
        #expect(try await b.ask("get k", answers: ["got k ", "error k "]) == "got k k@B#1")
        #expect(clock.now - start < .seconds(10))
        #expect(b.output.lines.contains(#"flight waiting for another instance's fetch of "k""#))
        #expect(b.output.lines.contains(#"flight took over the expired claim on "k""#))
        // B's call, and the dead holder's if its record committed before the kill.
        #expect((1...2).contains(try await fleet.originCalls(for: "k")))
        try await fleet.terminate()
    }

    @Test(.timeLimit(.minutes(2)))
    func aListenerKilledFromTheServerReconnectsAndReloadsItsSubscribers() async throws {
        let fleet = try await InstanceFleet.start(["A", "B"])
        let (a, b) = (fleet[0], fleet[1])
        try b.send("subscribe k")
        #expect(try await b.line(startingWith: "state k completed ") == "k@B#1")
        let terminated = try await withClient(fleet.server) { client in
            try await scalar(
                client,
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'B' AND query LIKE 'LISTEN %'"
            )
        }
        #expect(terminated == 1)
        _ = try await b.line { $0.hasPrefix("event listener disconnected") }
        // Written while B may not listen: B sees it either way, by the notification or by the reload of
        // every tracked key that follows its reconnection.
        #expect(try await a.ask("update k during-the-gap", answers: ["updated k", "error k "]) == "updated k")
        _ = try await b.line { $0.hasPrefix("event listening on") || $0.hasPrefix("event listener connected") }
        _ = try await b.line { $0 == "state k completed during-the-gap" }
        #expect(try await fleet.originCalls(for: "k") == 1)
        // And later writes are heard again.
        #expect(try await a.ask("update k after", answers: ["updated k", "error k "]) == "updated k")
        _ = try await b.line { $0 == "state k completed after" }
        try await fleet.terminate()
    }

    // MARK: Helpers

    /// Sends `update <probe> ok` to `instance` until it answers `updated`, for at most a minute.
    private func waitUntilWorking(_ instance: InstanceProcess, probe: String) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while true {
            let answer = try await instance.ask("update \(probe) ok", answers: ["updated \(probe)", "error \(probe) "])
            if answer == "updated \(probe)" { return }
            guard clock.now < deadline else { throw instance.failure("still failing a minute after the restart") }
        }
    }

    /// Expects the cache's table to be whole: one row, for the key `k`, whose size matches its bytes,
    /// of format 1, not invalidated, holding a JSON string of digits; and, where the server has the
    /// `amcheck` extension, its heap and every index verified.
    private func expectConsistentTable(_ fleet: InstanceFleet) async throws {
        let table = "storeflowable_cache_\(fleet.cache)"
        try await withClient(fleet.server) { client in
            #expect(try await scalar(client, "SELECT count(*) FROM \(unescaped: table)") == 1)
            let damaged = try await scalar(
                client,
                """
                SELECT count(*) FROM \(unescaped: table)
                WHERE key <> convert_to('"k"', 'UTF8') OR size <> octet_length(key) + octet_length(value)
                    OR format <> 1 OR invalidated OR convert_from(value, 'UTF8') !~ '^"[0-9]+"$'
                """)
            #expect(damaged == 0)
            let hasAmcheck = try await scalar(
                client, "SELECT count(*) FROM pg_available_extensions WHERE name = 'amcheck'")
            guard hasAmcheck == 1 else { return }
            try await execute(client, "CREATE EXTENSION IF NOT EXISTS amcheck")
            #expect(try await scalar(client, "SELECT count(*) FROM verify_heapam(\(table)::regclass)") == 0)
            // bt_index_check raises an error on a damaged index, which fails the test.
            try await execute(
                client,
                """
                SELECT bt_index_check(index => indexrelid, heapallindexed => true) FROM pg_index
                WHERE indrelid = \(table)::regclass
                """)
        }
    }
}
