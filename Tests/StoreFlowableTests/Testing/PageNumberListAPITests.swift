import StoreFlowable
import StoreFlowableTesting
import Testing

@Suite(.timeLimit(.minutes(1)))
struct PageNumberListAPITests {
    // MARK: Paging math

    @Test func pagesCoverTheListInOrderWithAShortLastPage() async throws {
        let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
        #expect(api.pageCount == 3)
        #expect(try await api.firstPage() == PagedData(data: Array(1...10), nextCursor: 1))
        #expect(try await api.page(1) == FetchedPage(data: Array(11...20), cursor: 2))
        #expect(try await api.page(2) == FetchedPage(data: Array(21...25), cursor: nil))
        #expect(api.requestedPages == [0, 1, 2])
        #expect(api.requestCount == 3)
    }

    @Test func firstPageIsPageZeroWithoutAPreviousCursor() async throws {
        let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
        let first = try await api.firstPage()
        #expect(first.prevCursor == nil)
        #expect(try await api.page(0) == FetchedPage(data: first.data, cursor: first.nextCursor))
        #expect(api.requestedPages == [0, 0])
    }

    @Test func anExactMultipleOfThePageSizeEndsWithoutAnEmptyPage() async throws {
        let api = PageNumberListAPI(items: Array(1...30), pageSize: 10)
        #expect(api.pageCount == 3)
        #expect(try await api.page(1) == FetchedPage(data: Array(11...20), cursor: 2))
        #expect(try await api.page(2) == FetchedPage(data: Array(21...30), cursor: nil))
        await #expect(throws: PageNumberListAPIError.pageOutOfRange(page: 3, pageCount: 3)) {
            try await api.page(3)
        }
    }

    @Test func aListOfExactlyOnePageHasNoNextCursor() async throws {
        let api = PageNumberListAPI(items: Array(1...10), pageSize: 10)
        #expect(try await api.firstPage() == PagedData(data: Array(1...10), nextCursor: nil))
    }

    @Test func aListShorterThanAPageIsServedWhole() async throws {
        let api = PageNumberListAPI(items: ["a", "b", "c"], pageSize: 10)
        #expect(try await api.firstPage() == PagedData(data: ["a", "b", "c"], nextCursor: nil))
    }

    @Test func anEmptyListHasOneEmptyPage() async throws {
        let api = PageNumberListAPI<Int>(pageSize: 10)
        #expect(api.pageCount == 1)
        #expect(try await api.firstPage() == PagedData(data: [], nextCursor: nil))
        await #expect(throws: PageNumberListAPIError.pageOutOfRange(page: 1, pageCount: 1)) {
            try await api.page(1)
        }
    }

    @Test func aPageSizeOfOneServesOneItemPerPage() async throws {
        let api = PageNumberListAPI(items: [7, 8], pageSize: 1)
        #expect(try await api.firstPage() == PagedData(data: [7], nextCursor: 1))
        #expect(try await api.page(1) == FetchedPage(data: [8], cursor: nil))
    }

    // MARK: Errors

    @Test func aNegativePageIsOutOfRange() async throws {
        let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
        await #expect(throws: PageNumberListAPIError.pageOutOfRange(page: -1, pageCount: 3)) {
            try await api.page(-1)
        }
        #expect(api.requestedPages == [-1])
    }

    @Test func outOfRangeErrorsDescribeThePage() {
        #expect(
            String(describing: PageNumberListAPIError.pageOutOfRange(page: 12, pageCount: 10))
                == "page 12 out of range (10 pages)")
        #expect(
            String(describing: PageNumberListAPIError.pageOutOfRange(page: 1, pageCount: 1))
                == "page 1 out of range (1 page)")
    }

    @Test func changesOnTheServerAffectLaterRequests() async throws {
        let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
        #expect(try await api.page(1) == FetchedPage(data: Array(11...20), cursor: 2))
        api.items = Array(1...12)
        #expect(api.pageCount == 2)
        #expect(try await api.page(1) == FetchedPage(data: [11, 12], cursor: nil))
        await #expect(throws: PageNumberListAPIError.pageOutOfRange(page: 2, pageCount: 2)) {
            try await api.page(2)
        }
        api.items = Array(1...40)
        #expect(try await api.page(2) == FetchedPage(data: Array(21...30), cursor: 3))
        #expect(api.items.count == 40)
    }

    @Test func scriptedFailuresFailTheNextRequestsInOrder() async throws {
        let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
        api.failNextRequests(1, with: TestError("first"))
        api.failNextRequests(1, with: TestError("second"))
        #expect(api.pendingFailureCount == 2)
        await #expect(throws: TestError("first")) { try await api.firstPage() }
        await #expect(throws: TestError("second")) { try await api.page(1) }
        #expect(try await api.page(1) == FetchedPage(data: Array(11...20), cursor: 2))
        #expect(api.pendingFailureCount == 0)
        #expect(api.requestedPages == [0, 1, 1])
        #expect(api.inFlightCount == 0)
    }

    @Test func aScriptedFailureWinsOverAnOutOfRangePage() async throws {
        let api = PageNumberListAPI(items: Array(1...5), pageSize: 10)
        api.failNextRequests(2, with: TestError("offline"))
        await #expect(throws: TestError("offline")) { try await api.page(9) }
        await #expect(throws: TestError("offline")) { try await api.page(0) }
        await #expect(throws: PageNumberListAPIError.pageOutOfRange(page: 9, pageCount: 1)) {
            try await api.page(9)
        }
    }

    // MARK: Gate

    @Test func heldRequestsWaitAtTheGateAndAnswerFromTheListAsItIsOnRelease() async throws {
        let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
        api.hold()
        let request = Task { try await api.page(1) }
        await api.waitForRequests(1)
        #expect(api.waitingAtGateCount == 1)
        #expect(api.inFlightCount == 1)
        #expect(api.requestedPages == [1])
        api.items = Array(101...125)
        api.release()
        #expect(try await request.value == FetchedPage(data: Array(111...120), cursor: 2))
        #expect(api.waitingAtGateCount == 0)
        #expect(api.inFlightCount == 0)
        #expect(api.cancelledCount == 0)
    }

    @Test func releaseThenHoldLetsOnlyTheParkedRequestsThrough() async throws {
        let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
        api.hold()
        let first = Task { try await api.page(0) }
        await api.waitForRequests(1)
        api.release()
        api.hold()
        #expect(try await first.value.data == Array(1...10))
        let second = Task { try await api.page(1) }
        await api.waitForRequests(2)
        #expect(api.waitingAtGateCount == 1)
        api.release()
        #expect(try await second.value.data == Array(11...20))
    }

    @Test func concurrentHeldRequestsAreCounted() async throws {
        let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
        api.hold()
        let first = Task { try await api.page(1) }
        let second = Task { try await api.page(2) }
        await api.waitForRequests(2)
        #expect(api.waitingAtGateCount == 2)
        #expect(api.maxConcurrentRequests == 2)
        #expect(Set(api.requestedPages) == [1, 2])
        api.release()
        #expect(try await first.value.data == Array(11...20))
        #expect(try await second.value.data == Array(21...25))
        #expect(api.maxConcurrentRequests == 2)
        #expect(api.inFlightCount == 0)
    }

    // MARK: Cancellation

    @Test func cancellingAHeldRequestThrowsCancellationErrorAndTakesNoFailure() async throws {
        let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
        api.failNextRequests(1, with: TestError("offline"))
        api.hold()
        let request = Task { try await api.page(1) }
        await api.waitForRequests(1)
        request.cancel()
        await api.waitForCancellations(1)
        await #expect(throws: CancellationError.self) { try await request.value }
        #expect(api.cancelledCount == 1)
        #expect(api.waitingAtGateCount == 0)
        #expect(api.inFlightCount == 0)
        #expect(api.pendingFailureCount == 1)
        #expect(api.requestedPages == [1])
        api.release()
        await #expect(throws: TestError("offline")) { try await api.page(1) }
    }

    @Test func aRequestFromACancelledTaskThrowsCancellationErrorWithTheGateOpen() async throws {
        let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
        let request = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await api.firstPage()
        }
        await #expect(throws: CancellationError.self) { try await request.value }
        #expect(api.cancelledCount == 1)
        #expect(api.requestedPages == [0])
        #expect(api.inFlightCount == 0)
    }

    @Test func releasingTheGateLeavesOnlyTheCancelledRequestCancelled() async throws {
        let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
        api.hold()
        let cancelled = Task { try await api.page(1) }
        let kept = Task { try await api.page(2) }
        await api.waitForRequests(2)
        cancelled.cancel()
        await api.waitForCancellations(1)
        #expect(api.waitingAtGateCount == 1)
        api.release()
        #expect(try await kept.value.data == Array(21...25))
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(api.cancelledCount == 1)
    }

    // MARK: Waiting

    @Test func waitingReturnsAtOnceWhenTheCountIsReached() async throws {
        let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
        _ = try await api.firstPage()
        await api.waitForRequests(1)
        await api.waitForRequests(0)
        await api.waitForCancellations(0)
    }

    @Test func waitingReturnsEarlyWhenTheWaitingTaskIsCancelled() async {
        let api = PageNumberListAPI<Int>(pageSize: 10)
        let requests = Task { await api.waitForRequests(1) }
        let cancellations = Task { await api.waitForCancellations(1) }
        requests.cancel()
        cancellations.cancel()
        await requests.value
        await cancellations.value
        #expect(api.requestCount == 0)
    }
}
