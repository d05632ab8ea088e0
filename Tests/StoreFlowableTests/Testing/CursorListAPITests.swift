import StoreFlowable
import StoreFlowableTesting
import Testing

@Suite(.timeLimit(.minutes(1)))
struct CursorListAPITests {
    // MARK: Paging math

    @Test func olderPagesWalkBackToTheOldestItem() async throws {
        let api = CursorListAPI(items: Array(1...25), pageSize: 10)
        let latest = try await api.latestPage()
        #expect(latest.data == Array(16...25))
        let olderCursor = try #require(latest.prevCursor)
        let older = try await api.olderPage(before: olderCursor)
        #expect(older.data == Array(6...15))
        let oldestCursor = try #require(older.cursor)
        let oldest = try await api.olderPage(before: oldestCursor)
        #expect(oldest == FetchedPage(data: Array(1...5), cursor: nil))
        #expect(api.requests == [.latest, .older(olderCursor), .older(oldestCursor)])
        #expect(api.requestCount == 3)
    }

    @Test func anExactMultipleOfThePageSizeEndsWithoutAnEmptyOlderPage() async throws {
        let api = CursorListAPI(items: Array(1...20), pageSize: 10)
        let latest = try await api.latestPage()
        #expect(latest.data == Array(11...20))
        let older = try await api.olderPage(before: try #require(latest.prevCursor))
        #expect(older == FetchedPage(data: Array(1...10), cursor: nil))
    }

    @Test func aListOfAtMostOnePageHasNoOlderCursor() async throws {
        let exact = CursorListAPI(items: Array(1...10), pageSize: 10)
        let exactLatest = try await exact.latestPage()
        #expect(exactLatest.data == Array(1...10))
        #expect(exactLatest.prevCursor == nil)
        let short = CursorListAPI(items: ["a", "b"], pageSize: 10)
        let shortLatest = try await short.latestPage()
        #expect(shortLatest.data == ["a", "b"])
        #expect(shortLatest.prevCursor == nil)
    }

    @Test func anEmptyLiveListServesAnEmptyPageAndLaterItsFirstMessages() async throws {
        let api = CursorListAPI<String>(pageSize: 10)
        let latest = try await api.latestPage()
        #expect(latest.data.isEmpty)
        #expect(latest.prevCursor == nil)
        let newerCursor = try #require(latest.nextCursor)
        api.append(contentsOf: ["hello", "world"])
        let newer = try await api.newerPage(after: newerCursor)
        #expect(newer.data == ["hello", "world"])
        #expect(newer.cursor != nil)
    }

    @Test func aLiveListKeepsANewerCursorThatPicksUpNewItems() async throws {
        let api = CursorListAPI(items: Array(1...5), pageSize: 10)
        let latest = try await api.latestPage()
        let newestCursor = try #require(latest.nextCursor)
        let nothingNew = try await api.newerPage(after: newestCursor)
        #expect(nothingNew == FetchedPage(data: [], cursor: newestCursor))
        api.append(contentsOf: Array(6...17))
        let newer = try await api.newerPage(after: newestCursor)
        #expect(newer.data == Array(6...15))
        let rest = try await api.newerPage(after: try #require(newer.cursor))
        #expect(rest.data == [16, 17])
        #expect(rest.cursor != nil)
        #expect(api.items == Array(1...17))
    }

    @Test func aListThatIsNotLiveHasNoNewerCursorAtItsNewestEnd() async throws {
        let api = CursorListAPI(items: Array(1...25), pageSize: 10, isLive: false)
        #expect(!api.isLive)
        let latest = try await api.latestPage()
        #expect(latest.nextCursor == nil)
        #expect(latest.prevCursor != nil)
    }

    @Test func closingAListEndsNewerPagingOnlyAtTheNewestEnd() async throws {
        let api = CursorListAPI(items: Array(1...5), pageSize: 10)
        let newestCursor = try #require(try await api.latestPage().nextCursor)
        api.append(contentsOf: Array(6...30))
        api.isLive = false
        let newer = try await api.newerPage(after: newestCursor)
        #expect(newer.data == Array(6...15))
        let middle = try await api.newerPage(after: try #require(newer.cursor))
        #expect(middle.data == Array(16...25))
        let last = try await api.newerPage(after: try #require(middle.cursor))
        #expect(last == FetchedPage(data: Array(26...30), cursor: nil))
    }

    @Test func prependedHistoryKeepsHandedOutCursorsValid() async throws {
        let api = CursorListAPI(items: Array(1...15), pageSize: 5)
        let latest = try await api.latestPage()
        #expect(latest.data == Array(11...15))
        api.prepend(contentsOf: [-2, -1, 0])
        #expect(api.items == Array(-2...15))
        let older = try await api.olderPage(before: try #require(latest.prevCursor))
        #expect(older.data == Array(6...10))
        let oldestOriginal = try await api.olderPage(before: try #require(older.cursor))
        #expect(oldestOriginal.data == Array(1...5))
        let prepended = try await api.olderPage(before: try #require(oldestOriginal.cursor))
        #expect(prepended == FetchedPage(data: [-2, -1, 0], cursor: nil))
        let again = try await api.latestPage()
        #expect(again.data == Array(11...15))
        #expect(again.prevCursor == latest.prevCursor)
        #expect(again.nextCursor == latest.nextCursor)
    }

    @Test func cursorsOfTheSamePlaceAreEqualAndDescribeTheirDirection() async throws {
        let api = CursorListAPI(items: Array(1...25), pageSize: 10)
        let first = try await api.latestPage()
        let second = try await api.latestPage()
        #expect(first == second)
        let older = try #require(first.prevCursor)
        let newer = try #require(first.nextCursor)
        #expect(older != newer)
        #expect(Set([older, newer, try #require(second.prevCursor)]).count == 2)
        #expect(older.description == "ListCursor(older than #15)")
        #expect(newer.description == "ListCursor(newer from #25)")
        #expect(CursorListRequest.older(older).description == "older(ListCursor(older than #15))")
        #expect(CursorListRequest.latest.description == "latest")
    }

    // MARK: Errors

    @Test func aCursorOfTheOtherDirectionIsRejected() async throws {
        let api = CursorListAPI(items: Array(1...25), pageSize: 10)
        let latest = try await api.latestPage()
        let older = try #require(latest.prevCursor)
        let newer = try #require(latest.nextCursor)
        await #expect(throws: CursorListAPIError.wrongDirection(newer)) { try await api.olderPage(before: newer) }
        await #expect(throws: CursorListAPIError.wrongDirection(older)) { try await api.newerPage(after: older) }
        #expect(api.requests == [.latest, .older(newer), .newer(older)])
    }

    @Test func aCursorFromALongerListIsUnknown() async throws {
        let long = CursorListAPI(items: Array(1...100), pageSize: 10)
        let latest = try await long.latestPage()
        let newer = try #require(latest.nextCursor)
        let short = CursorListAPI(items: Array(1...10), pageSize: 10)
        await #expect(throws: CursorListAPIError.unknownCursor(newer)) { try await short.newerPage(after: newer) }
        #expect(
            String(describing: CursorListAPIError.unknownCursor(newer))
                == "unknown cursor ListCursor(newer from #100)")
    }

    @Test func scriptedFailuresFailTheNextRequestsInOrder() async throws {
        let api = CursorListAPI(items: Array(1...25), pageSize: 10)
        api.failNextRequests(2, with: TestError("offline"))
        await #expect(throws: TestError("offline")) { try await api.latestPage() }
        await #expect(throws: TestError("offline")) { try await api.latestPage() }
        #expect(try await api.latestPage().data == Array(16...25))
        #expect(api.pendingFailureCount == 0)
        #expect(api.requests == [.latest, .latest, .latest])
    }

    // MARK: Gate and cancellation

    @Test func aHeldRequestAnswersWithMessagesThatArrivedWhileItWaited() async throws {
        let api = CursorListAPI(items: Array(1...5), pageSize: 10)
        let newestCursor = try #require(try await api.latestPage().nextCursor)
        api.hold()
        let request = Task { try await api.newerPage(after: newestCursor) }
        await api.waitForRequests(2)
        #expect(api.waitingAtGateCount == 1)
        #expect(api.inFlightCount == 1)
        api.append(contentsOf: [6, 7])
        api.release()
        #expect(try await request.value.data == [6, 7])
        #expect(api.inFlightCount == 0)
    }

    @Test func bothDirectionsMayBeHeldAtOnce() async throws {
        let api = CursorListAPI(items: Array(1...25), pageSize: 10)
        let latest = try await api.latestPage()
        let olderCursor = try #require(latest.prevCursor)
        let newerCursor = try #require(latest.nextCursor)
        api.hold()
        let older = Task { try await api.olderPage(before: olderCursor) }
        let newer = Task { try await api.newerPage(after: newerCursor) }
        await api.waitForRequests(3)
        #expect(api.waitingAtGateCount == 2)
        #expect(api.maxConcurrentRequests == 2)
        api.release()
        #expect(try await older.value.data == Array(6...15))
        #expect(try await newer.value.data == [])
    }

    @Test func cancellingAHeldRequestThrowsCancellationError() async throws {
        let api = CursorListAPI(items: Array(1...25), pageSize: 10)
        api.failNextRequests(1, with: TestError("offline"))
        api.hold()
        let request = Task { try await api.latestPage() }
        await api.waitForRequests(1)
        request.cancel()
        await api.waitForCancellations(1)
        await #expect(throws: CancellationError.self) { try await request.value }
        #expect(api.cancelledCount == 1)
        #expect(api.inFlightCount == 0)
        #expect(api.waitingAtGateCount == 0)
        #expect(api.pendingFailureCount == 1)
        api.release()
    }

    @Test func aRequestFromACancelledTaskThrowsCancellationErrorWithTheGateOpen() async throws {
        let api = CursorListAPI(items: Array(1...25), pageSize: 10)
        let request = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await api.latestPage()
        }
        await #expect(throws: CancellationError.self) { try await request.value }
        #expect(api.cancelledCount == 1)
        #expect(api.requests == [.latest])
    }

    @Test func waitingReturnsEarlyWhenTheWaitingTaskIsCancelled() async {
        let api = CursorListAPI<Int>(pageSize: 10)
        let requests = Task { await api.waitForRequests(1) }
        let cancellations = Task { await api.waitForCancellations(1) }
        requests.cancel()
        cancellations.cancel()
        await requests.value
        await cancellations.value
        #expect(api.requestCount == 0)
    }
}
