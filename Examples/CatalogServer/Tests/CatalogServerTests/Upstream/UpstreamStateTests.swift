import CatalogModel
import CatalogUpstream
import Testing

/// The upstream's state on its own, without HTTP: the edges of pages, writes and faults.
@Suite("Upstream: state")
struct UpstreamStateTests {
    @Test(.timeLimit(.minutes(1)))
    func pagesStopAtTheEndOfTheCatalogue() async throws {
        let state = UpstreamState(productCount: 10, control: UpstreamControl())
        #expect(try await state.page(after: 0, limit: 4).products.map(\.id) == [1, 2, 3, 4])
        #expect(try await state.page(after: 0, limit: 4).nextCursor == 4)
        #expect(
            try await state.page(after: 8, limit: 4)
                == ProductPage(products: [.generated(id: 9), .generated(id: 10)], nextCursor: nil))
        #expect(try await state.page(after: 6, limit: 4).nextCursor == nil)
        #expect(try await state.page(after: 5, limit: 4).nextCursor == 9)
        #expect(try await state.page(after: Int.max, limit: 100).products.isEmpty)
        #expect(try await state.page(after: -5, limit: 100).products.isEmpty)
        #expect(try await state.page(after: 0, limit: Int.max).products.count == 10)
    }

    /// A catalogue of `Int.max` products: a page near its end is cut at the end, with no overflow.
    @Test(.timeLimit(.minutes(1)))
    func aPageNearTheEndOfTheLargestCatalogueDoesNotOverflow() async throws {
        let state = UpstreamState(productCount: .max, control: UpstreamControl())
        let last = try await state.page(after: .max - 1, limit: 20)
        #expect(last.products.map(\.id) == [.max])
        #expect(last.nextCursor == nil)
        #expect(try await state.page(after: .max - 30, limit: 20).nextCursor == .max - 10)
    }

    @Test(.timeLimit(.minutes(1)))
    func anEmptyCatalogueServesNothing() async throws {
        let state = UpstreamState(productCount: 0, control: UpstreamControl())
        #expect(try await state.product(id: 1) == nil)
        #expect(try await state.page(after: 0, limit: 20) == ProductPage(products: [], nextCursor: nil))
        #expect(try await state.batch(ids: [1, 2]).products.isEmpty)
        #expect(try await state.write(.generated(id: 1)) == nil)
    }

    @Test(.timeLimit(.minutes(1)))
    func theFaultsAtServingTimeDecide() async throws {
        let state = UpstreamState(productCount: 10, control: UpstreamControl())
        _ = try await state.updateControl(UpstreamControlUpdate(outage: true))
        await #expect(throws: UpstreamFault.outage) { try await state.product(id: 1) }
        await #expect(throws: UpstreamFault.outage) { try await state.write(.generated(id: 1)) }
        _ = try await state.updateControl(UpstreamControlUpdate(errorRate: 1, outage: false))
        await #expect(throws: UpstreamFault.injectedError) { try await state.batch(ids: [1]) }
        _ = try await state.updateControl(UpstreamControlUpdate(errorRate: 0))
        #expect(try await state.write(.generated(id: 1))?.version == 2)
    }
}
