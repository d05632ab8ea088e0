import CatalogModel
import Foundation
import Testing

/// The catalogue's model: generated products, and the JSON the upstream and the service exchange.
@Suite("Catalogue model")
struct ProductModelTests {
    @Test
    func aGeneratedProductIsAlwaysTheSameAndAboutThreeHundredBytes() throws {
        for id in [1, 42, 9_999, 10_000] {
            let product = Product.generated(id: id)
            #expect(product == Product.generated(id: id))
            #expect(product.id == id)
            #expect(product.name == "Product \(id)")
            #expect(product.version == 1)
            #expect((99..<99_999).contains(product.priceCents))
            let size = try JSONEncoder().encode(product).count
            #expect((250...350).contains(size), "product \(id): \(size) bytes")
        }
        #expect(Product.generated(id: 1) != Product.generated(id: 2))
        // A fixed sample, so that a change to the generator shows (every run serves the same catalogue).
        #expect(Product.generated(id: 1).priceCents == 31_222)
    }

    @Test
    func aProductsJSONHasTheFiveFieldsOfTheContract() throws {
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(Product.generated(id: 3)))
        let object = try #require(json as? [String: Any])
        #expect(Set(object.keys) == ["id", "name", "priceCents", "description", "version"])
    }

    @Test
    func theLastPageWritesANullCursor() throws {
        let last = String(decoding: try JSONEncoder().encode(ProductPage(products: [], nextCursor: nil)), as: UTF8.self)
        #expect(last.contains(#""nextCursor":null"#))
        let decoded = try JSONDecoder().decode(ProductPage.self, from: Data(#"{"products":[]}"#.utf8))
        #expect(decoded.nextCursor == nil)
    }

    @Test
    func aControlUpdateKeepsTheFieldsItLeavesOut() throws {
        let control = UpstreamControl(latencyMilliseconds: 20, errorRate: 0.5, outage: false)
        #expect(control.applying(UpstreamControlUpdate()) == control)
        #expect(
            control.applying(UpstreamControlUpdate(outage: true))
                == UpstreamControl(latencyMilliseconds: 20, errorRate: 0.5, outage: true))
        let update = try JSONDecoder().decode(UpstreamControlUpdate.self, from: Data(#"{"errorRate": 1}"#.utf8))
        #expect(update == UpstreamControlUpdate(errorRate: 1))
        #expect(!UpstreamControl(latencyMilliseconds: -1).isValid)
        #expect(!UpstreamControl(errorRate: 1.01).isValid)
        #expect(UpstreamControl(errorRate: 1).isValid)
    }
}
