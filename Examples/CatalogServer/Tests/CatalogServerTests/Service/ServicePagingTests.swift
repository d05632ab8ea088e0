import CatalogModel
import CatalogService
import StoreFlowableTesting
import Testing

/// `GET /products?cursor=` end to end: the product list through its paged stores, a section of 100 ids
/// each, filled 20 products (one upstream page) at a time.
@Suite("Service: pages of the product list")
struct ServicePagingTests {
    @Test(.timeLimit(.minutes(1)))
    func followingTheCursorsReadsTheWholeListOnceFromTheUpstream() async throws {
        try await UpstreamTestServer.run(productCount: 250) { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                for walk in 1...2 {
                    var ids: [Int] = []
                    var cursor: Int? = 0
                    var pages = 0
                    while let next = cursor {
                        let answer = try await service.get(next == 0 ? "/products" : "/products?cursor=\(next)")
                        #expect(answer.status == 200)
                        let page = try answer.decode(ProductPage.self)
                        #expect(page.products.count == (page.nextCursor == nil ? 10 : 20))
                        #expect(page.products.allSatisfy { $0 == .generated(id: $0.id) })
                        ids += page.products.map(\.id)
                        cursor = page.nextCursor
                        pages += 1
                    }
                    #expect(ids == Array(1...250), "walk \(walk)")
                    #expect(pages == 13)
                    // Each upstream page was asked for once, by the first walk: 5 + 5 + 3 in three sections.
                    #expect(await upstream.upstream.state.stats.pageRequests == 13, "walk \(walk)")
                }
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aCursorDeepInTheListLoadsOnlyItsSection() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                let page = try await service.get("/products?cursor=9950").decode(ProductPage.self)
                #expect(page.products.map(\.id) == Array(9951...9970))
                #expect(page.nextCursor == 9970)
                // Section 99 (ids 9901 to 10000) up to 9980: four pages, none of the 99 sections before.
                #expect(await upstream.upstream.state.stats.pageRequests == 4)

                let last = try await service.get("/products?cursor=9980").decode(ProductPage.self)
                #expect(last.products.map(\.id) == Array(9981...10000))
                #expect(last.nextCursor == nil)
                #expect(await upstream.upstream.state.stats.pageRequests == 5)
                let past = try await service.get("/products?cursor=10000").decode(ProductPage.self)
                #expect(past.products.isEmpty)
                #expect(past.nextCursor == nil)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aPageAcrossTwoSectionsJoinsThem() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                let page = try await service.get("/products?cursor=90").decode(ProductPage.self)
                #expect(page.products.map(\.id) == Array(91...110))
                #expect(page.nextCursor == 110)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func concurrentRequestsForOnePageShareOneUpstreamRequest() async throws {
        let upstreamClock = ManualClock()
        try await UpstreamTestServer.run(control: UpstreamControl(latencyMilliseconds: 100), clock: upstreamClock) {
            upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                try await withThrowingTaskGroup(of: ProductPage.self) { group in
                    for _ in 0..<20 {
                        group.addTask { try await service.get("/products?cursor=0").decode(ProductPage.self) }
                    }
                    await upstreamClock.sleepers(atLeast: 1)
                    try await waitUntil("every request joined the first page's fetch") {
                        let joined =
                            #"storeflowable_fetches{data_type="PagedData<ProductListSection, Int>",outcome="joined"}"#
                        return try await service.metric(joined) == 19
                    }
                    upstreamClock.advance(by: .milliseconds(100))
                    for try await page in group { #expect(page.products.map(\.id) == Array(1...20)) }
                }
                #expect(await upstream.upstream.state.stats.pageRequests == 1)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aWriteUpdatesTheCachedPageInPlace() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                _ = try await service.get("/products")
                let renamed = Product(id: 3, name: "Renamed", priceCents: 1, description: "d", version: 1)
                #expect(try await service.call("PUT", "/products/3", json: renamed).status == 200)
                let page = try await service.get("/products").decode(ProductPage.self)
                #expect(page.products[2].name == "Renamed")
                #expect(page.products[2].version == 2)
                #expect(page.nextCursor == 20)
                #expect(await upstream.upstream.state.stats.pageRequests == 1)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aStaleSectionIsLoadedAgainFromItsFirstPage() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                _ = try await service.get("/products?cursor=20")
                #expect(await upstream.upstream.state.stats.pageRequests == 2)
                service.cacheClock.advance(by: .seconds(4))
                _ = try await service.get("/products?cursor=20")
                #expect(await upstream.upstream.state.stats.pageRequests == 2)
                service.cacheClock.advance(by: .seconds(1))
                _ = try await service.get("/products?cursor=20")
                #expect(await upstream.upstream.state.stats.pageRequests == 4)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: ["abc", "-1", "4503599627370497", "1.5"])
    func aBadCursorIsA400InJSON(cursor: String) async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                let answer = try await service.get("/products?cursor=\(cursor)")
                #expect(answer.status == 400)
                #expect(try answer.errorMessage() == "the cursor must be an integer of 0 or more, not '\(cursor)'")
                #expect(await upstream.upstream.state.stats.requests == 0)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anOutageWithNoCachedPageIsA503() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL, configure: { $0.retry = .never }) { service in
                _ = try await upstream.upstream.state.updateControl(UpstreamControlUpdate(outage: true))
                let answer = try await service.get("/products")
                #expect(answer.status == 503)
                #expect(try answer.errorMessage().hasPrefix("the upstream is unavailable"))
            }
        }
    }
}
