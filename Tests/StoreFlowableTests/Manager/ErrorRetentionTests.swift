import Testing

@testable import StoreFlowable

/// The bounded queue of idle keys kept only for their error.
struct ErrorRetentionTests {
    @Test func forgetsTheOldestBeyondTheLimit() {
        var retention = ErrorRetention<Int>(limit: 3)
        #expect(retention.retain(1) == [])
        #expect(retention.retain(2) == [])
        #expect(retention.retain(3) == [])
        #expect(retention.retain(4) == [1])
        #expect(retention.retain(5) == [2])
        #expect(retention.count == 3)
        #expect(!retention.contains(1) && retention.contains(5))
    }

    @Test func aRemovedAndRetainedAgainElementMovesToTheBack() {
        var retention = ErrorRetention<Int>(limit: 2)
        _ = retention.retain(1)
        _ = retention.retain(2)
        retention.remove(1)
        #expect(retention.retain(1) == [])
        #expect(retention.retain(3) == [2])
        #expect(retention.retain(4) == [1])
    }

    @Test func retainingTwiceKeepsTheOriginalPlace() {
        var retention = ErrorRetention<Int>(limit: 2)
        _ = retention.retain(1)
        _ = retention.retain(2)
        #expect(retention.retain(1) == [])
        #expect(retention.retain(3) == [1])
    }

    @Test(arguments: [0, -5])
    func aLimitOfZeroOrLessRetainsNothing(limit: Int) {
        var retention = ErrorRetention<Int>(limit: limit)
        #expect(retention.retain(7) == [7])
        #expect(retention.count == 0)
    }

    @Test func churnDoesNotGrowTheQueueWithoutBound() {
        var retention = ErrorRetention<Int>(limit: 10)
        for round in 0..<100_000 {
            _ = retention.retain(round % 3)
            retention.remove(round % 3)
        }
        #expect(retention.count == 0)
        #expect(retention.storedEntryCount <= 2 * 10 + 16 + 1)
    }
}
