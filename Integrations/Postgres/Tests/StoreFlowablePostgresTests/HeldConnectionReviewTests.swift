import PostgresNIO
import StoreFlowable
import Testing

@testable import StoreFlowablePostgres

/// Review of the connection a cache statement holds (``HeldConnection``): when the deadline closes it,
/// and what the pool gets back.
@Suite(.timeLimit(.minutes(2)))
struct HeldConnectionReviewTests {
    /// A caller cancelled while its statement waits on a backend that stopped answering: the call
    /// returns `cancelled` at once, and its statement is left running. It used to keep its connection
    /// for as long as the backend did not answer (the deadline's timer was cancelled with the caller),
    /// so with a pool of one the next read timed out; now the statement still gives up its connection
    /// at the cache's timeout.
    @Test(.enabled(if: FrozenBackend.canSeeSockets, "needs /proc/net/tcp"))
    func aCancelledStatementStillGivesUpItsConnectionAtItsDeadline() async throws {
        try await withPoolOfOne { client in
            let patient = try await makeCache(client, timeout: .seconds(30))
            // Long enough for the cancellation to come first on a busy machine: a deadline that passed
            // before the statement was seen unread would close the connection, and nothing would be.
            let cache = try await openWithShortTimeout(client, name: patient.name, timeout: .seconds(10))
            let connection = try await onlyConnection(client)
            let frozen = try FrozenBackend(connection.backend)
            defer { frozen.thaw() }

            let read = Task { () async -> PostgresCacheError? in
                do throws(PostgresCacheError) {
                    _ = try await cache.entry(forKey: 1)
                    return nil
                } catch {
                    return error
                }
            }
            // The read's statement reached the stopped backend.
            try await frozen.waitUntilSomethingIsUnread(
                serverPort: try await sharedServer().port, clientPort: Int(connection.port))
            read.cancel()
            let failure = await read.value
            guard case .cancelled = failure else {
                Issue.record("the cancelled read ended with \(String(describing: failure))")
                return
            }
            // The only connection is given up at the cancelled read's deadline (10 s), and replaced.
            #expect(try await patient.entry(forKey: 1) == nil)
        }
    }

    /// A statement answered just as its deadline passed: the deadline closes the connection after the
    /// answer came, before the statement gave it back. The pool must get it back only once the close
    /// is complete: given back while the close is under way, it leased it to the next request, whose
    /// query failed or was never answered (NIO drops a write once the channel's handlers are removed).
    /// The give-back is ``HeldConnection/releaseOnceClosed()``, which
    /// ``PostgresNIO/PostgresClient/rowsOnOpenConnection(_:holding:onAnswer:)`` calls on every path.
    @Test func aConnectionClosedAfterItsStatementSucceededIsGivenBackOnlyOnceClosed() async throws {
        try await withPoolOfOne { client in
            for _ in 0..<10 {
                let held = HeldConnection()
                let answered = try await client.withConnection { connection in
                    #expect(held.hold(connection))
                    let rows = try await connection.rowsIfOpen("SELECT 1::int8")
                    // The deadline passes now: after the answer, before the give-back.
                    held.startClosing()
                    await held.releaseOnceClosed()
                    return rows != nil
                }
                #expect(answered)
                // Another user of the client, on the pool's only connection.
                let next = await withDeadline(.seconds(10)) { try await scalar(client, "SELECT 2::int8") }
                guard case .finished(.success(2)) = next else {
                    Issue.record("the next query on the pool ended with \(next)")
                    return
                }
            }
        }
    }

    /// A caller cancelled while its statement waits for the pool's only connection, which the test
    /// holds: when the test gives the connection back, the statement is not sent (the row it would
    /// insert is not there), the caller gets `cancelled`, and the connection goes back to the pool
    /// intact (the same backend answers next). It used to be sent: the statement's task, unstructured,
    /// was cancelled only once its caller had resumed and cancelled it, and the pool handed it the
    /// connection meanwhile. Many rounds, since that window is a race.
    @Test func aStatementWhoseCallerWasCancelledWhileItWaitedForTheConnectionIsNotSent() async throws {
        try await withPoolOfOne { client in
            let cache = try await makeCache(client)
            let backend = try await onlyConnection(client).backend
            let storedAt = CacheTime(nanosecondsSince1970: 1)
            for round in 0..<100 {
                let write = try await client.withConnection { _ in
                    // Runs on this thread until its statement waits for the connection held here.
                    let write = startedHere {
                        try await cache.setEntry(CacheEntry(value: "sent", storedAt: storedAt), forKey: round)
                    }
                    write.cancel()
                    return write
                    // The connection goes back to the pool now, to the cancelled write's request.
                }
                let outcome = await write.value
                guard case .cancelled? = outcome as? PostgresCacheError else {
                    Issue.record("round \(round): the cancelled write ended with \(String(describing: outcome))")
                    return
                }
                // With a pool of one, this runs after the write's statement, if it was sent.
                let written = try await rowCount(client, cache)
                #expect(written == 0, "round \(round): the cancelled write's statement was sent")
                #expect(try await onlyConnection(client).backend == backend, "round \(round)")
                if written != 0 { return }
            }
        }
    }

    /// A caller already cancelled when it calls: its statement is not sent, although the pool's
    /// connection is free, it gets `cancelled`, and the connection stays in the pool. The statement's
    /// task, started on the caller's thread with `Task.immediate`, used to lease the free connection
    /// and send the statement before the caller's cancellation was looked at.
    @Test func aStatementOfACallerAlreadyCancelledIsNotSent() async throws {
        try await withPoolOfOne { client in
            let cache = try await makeCache(client)
            let backend = try await onlyConnection(client).backend
            let storedAt = CacheTime(nanosecondsSince1970: 1)
            for round in 0..<20 {
                let write = Task { () async -> (any Error)? in
                    withUnsafeCurrentTask { $0?.cancel() }
                    do {
                        try await cache.setEntry(CacheEntry(value: "sent", storedAt: storedAt), forKey: round)
                        return nil
                    } catch {
                        return error
                    }
                }
                let outcome = await write.value
                guard case .cancelled? = outcome as? PostgresCacheError else {
                    Issue.record("round \(round): the cancelled write ended with \(String(describing: outcome))")
                    return
                }
                let written = try await rowCount(client, cache)
                #expect(written == 0, "round \(round): the cancelled write's statement was sent")
                #expect(try await onlyConnection(client).backend == backend, "round \(round)")
                if written != 0 { return }
            }
        }
    }

    /// The deadline of a cancelled caller's operation: it still runs the late action when the deadline
    /// passes with the operation running (here the operation, which ignores cancellation as a query
    /// does, ends only then).
    @Test func aCancelledCallersOperationStillMeetsItsDeadline() async throws {
        let lateAction = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
        let caller = Task {
            await withDeadline(.milliseconds(200), pastDeadlineAfterCancellation: { lateAction.succeed() }) {
                try await lateAction.futureResult.get()
                return 1
            }
        }
        caller.cancel()
        guard case .cancelled = await caller.value else {
            Issue.record("the caller was not told it was cancelled")
            lateAction.succeed()
            return
        }
        // Ends only once the late action ran.
        try await lateAction.futureResult.get()
    }
}

/// Starts `operation` in a task that runs on the calling thread until it first suspends
/// (`Task.immediate`), where the runtime has it; elsewhere in a task enqueued as usual.
///
/// - Parameter operation: The work.
/// - Returns: The task, whose value is what `operation` threw, or `nil`.
private func startedHere(_ operation: @escaping @Sendable () async throws -> Void) -> Task<(any Error)?, Never> {
    let run: @Sendable () async -> (any Error)? = {
        do {
            try await operation()
            return nil
        } catch {
            return error
        }
    }
    if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
        return Task.immediate(operation: run)
    }
    return Task(operation: run)
}
