import CatalogModel
import CatalogUpstream
import Testing

/// The upstream's product routes over HTTP: single, batch, pages and writes.
@Suite("Upstream: products")
struct UpstreamProductTests {
    @Test(.timeLimit(.minutes(1)))
    func servesTheGeneratedProductAsJSON() async throws {
        try await UpstreamTestServer.run { server in
            let answer = try await server.call("/products/42")
            #expect(answer.status == 200)
            #expect(answer.contentType == "application/json")
            #expect(try answer.decode(Product.self) == Product.generated(id: 42))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func answers404WithAJSONErrorOutsideTheCatalogue() async throws {
        try await UpstreamTestServer.run(productCount: 100) { server in
            for id in [0, 101, -3] {
                let answer = try await server.call("/products/\(id)")
                #expect(answer.status == 404, "id \(id)")
                #expect(try answer.decode(ErrorBody.self).error.contains("\(id)"))
            }
            #expect(try await server.call("/products/100").status == 200)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func batchServesTheKnownIdsInTheirOrderOnceAndLeavesOutTheUnknown() async throws {
        try await UpstreamTestServer.run { server in
            let answer = try await server.call("/products?ids=5,99999,3,5,0")
            #expect(answer.status == 200)
            #expect(try answer.decode(ProductBatch.self).products == [.generated(id: 5), .generated(id: 3)])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func batchTakesAtMostOneHundredIds() async throws {
        try await UpstreamTestServer.run { server in
            let hundred = (1...ProductBatch.maximumCount).map(String.init).joined(separator: ",")
            let full = try await server.call("/products?ids=\(hundred)")
            #expect(full.status == 200)
            #expect(try full.decode(ProductBatch.self).products.map(\.id) == Array(1...ProductBatch.maximumCount))

            let tooMany = try await server.call("/products?ids=\(hundred),101")
            #expect(tooMany.status == 400)
            #expect(try tooMany.decode(ErrorBody.self).error.contains("at most 100"))
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: [(250, 100), (45, nil), (7, 7), (1, 100)])
    func pagesCoverTheCatalogueExactlyOnceInIdOrder(productCount: Int, limit: Int?) async throws {
        try await UpstreamTestServer.run(productCount: productCount) { server in
            let pageSize = limit ?? ProductPage.defaultLimit
            var ids: [Int] = []
            var cursor: Int? = 0
            var pages = 0
            // Bounded: one page more than needed would already be a failure.
            while let current = cursor, pages <= productCount / pageSize + 1 {
                let query = "/products?cursor=\(current)" + (limit.map { "&limit=\($0)" } ?? "")
                let answer = try await server.call(query)
                #expect(answer.status == 200)
                let page = try answer.decode(ProductPage.self)
                #expect(page.products.count <= pageSize)
                #expect(page.products.allSatisfy { $0 == .generated(id: $0.id) })
                ids += page.products.map(\.id)
                cursor = page.nextCursor
                pages += 1
            }
            #expect(cursor == nil)
            #expect(ids == Array(1...productCount))
            #expect(pages == (productCount + pageSize - 1) / pageSize)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aPageAfterTheLastIdIsEmpty() async throws {
        try await UpstreamTestServer.run(productCount: 10) { server in
            for cursor in [10, 11, Int.max] {
                let answer = try await server.call("/products?cursor=\(cursor)")
                #expect(answer.status == 200)
                #expect(try answer.decode(ProductPage.self) == ProductPage(products: [], nextCursor: nil))
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aWriteRaisesTheVersionAndIsServedByEveryReadAfter() async throws {
        try await UpstreamTestServer.run(productCount: 20) { server in
            var renamed = Product.generated(id: 7)
            renamed.name = "Renamed"
            renamed.version = 99  // the upstream's version wins, whatever the body says
            let first = try await server.call("PUT", "/products/7", json: renamed)
            #expect(first.status == 200)
            var expected = renamed
            expected.version = 2
            #expect(try first.decode(Product.self) == expected)

            #expect(try await server.call("/products/7").decode(Product.self) == expected)
            #expect(try await server.call("/products?ids=6,7").decode(ProductBatch.self).products[1] == expected)
            let page = try await server.call("/products?cursor=5&limit=3").decode(ProductPage.self)
            #expect(page.products.map(\.version) == [1, 2, 1])

            let second = try await server.call("PUT", "/products/7", json: renamed)
            #expect(try second.decode(Product.self).version == 3)
            #expect(try await server.call("/products/8").decode(Product.self) == .generated(id: 8))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aWriteOutsideTheCatalogueIs404AndStoresNothing() async throws {
        try await UpstreamTestServer.run(productCount: 20) { server in
            let answer = try await server.call("PUT", "/products/21", json: Product.generated(id: 21))
            #expect(answer.status == 404)
            #expect(try answer.decode(ErrorBody.self).error.contains("21"))
            #expect(try await server.call("/products/21").status == 404)
        }
    }
}
