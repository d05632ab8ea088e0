import CatalogModel
import Testing

@testable import CatalogUpstream

/// Parsing `GET /products?...` into a batch or a page.
@Suite("Upstream: product query")
struct ProductQueryTests {
    @Test
    func idsMakeABatchInTheirOrderEachOnce() throws {
        #expect(try ProductQuery(ids: "3,1,3,2", cursor: nil, limit: nil) == .batch(ids: [3, 1, 2]))
        #expect(try ProductQuery(ids: "-4", cursor: nil, limit: nil) == .batch(ids: [-4]))
    }

    @Test
    func noIdsMakeAPageWithTheDefaults() throws {
        #expect(
            try ProductQuery(ids: nil, cursor: nil, limit: nil) == .page(cursor: 0, limit: ProductPage.defaultLimit))
        #expect(try ProductQuery(ids: nil, cursor: "40", limit: "100") == .page(cursor: 40, limit: 100))
        #expect(try ProductQuery(ids: nil, cursor: nil, limit: "1") == .page(cursor: 0, limit: 1))
    }

    @Test(
        arguments: [
            ("", nil, nil), ("1,", nil, nil), ("a", nil, nil), ("1", "0", nil), ("1", nil, "5"),
            (nil, "-1", nil), (nil, "1e3", nil), (nil, nil, "0"), (nil, nil, "101"), (nil, nil, ""),
        ] as [(Substring?, Substring?, Substring?)])
    func malformedOrOutOfRangeParametersAreRefusedWith400(
        ids: Substring?, cursor: Substring?, limit: Substring?
    ) {
        #expect {
            try ProductQuery(ids: ids, cursor: cursor, limit: limit)
        } throws: { error in
            (error as? UpstreamRequestError)?.status == .badRequest
        }
    }

    @Test
    func aBatchTakesAtMostTheMaximumCount() throws {
        let maximum = (1...ProductBatch.maximumCount).map(String.init).joined(separator: ",")
        #expect(try ProductQuery(ids: maximum[...], cursor: nil, limit: nil) == .batch(ids: Array(1...100)))
        #expect(throws: UpstreamRequestError.self) {
            try ProductQuery(ids: (maximum + ",101")[...], cursor: nil, limit: nil)
        }
    }
}
