import Foundation
import Testing

@testable import StoreFlowableFoundation

/// `JSONDiskCacheCoder` writes `Int` and plain `String` keys without a `JSONEncoder`: the bytes must be
/// exactly `JSONEncoder`'s, or caches written before would miss every key.
@Suite struct JSONDiskCacheCoderTests {
    @Test(arguments: [0, 1, -1, 42, 1_000_000, Int.max, Int.min])
    func anIntKeyIsWhatJSONEncoderWrites(key: Int) throws {
        let coder = JSONDiskCacheCoder<Int, String>()
        #expect(JSONDiskCacheCoder<Int, String>.plainJSON(of: key) != nil)
        #expect(try coder.encodeKey(key) == JSONEncoder().encode(key))
        #expect(try coder.decodeKey(from: coder.encodeKey(key)) == key)
    }

    @Test(arguments: [
        "", "ada", "user:42", "A B~", "with \"quote\"", "back\\slash", "a/b", "tab\there", "new\nline",
        "\u{7F}", "é", "日本", "emoji 🙂", "\u{0}",
    ])
    func aStringKeyIsWhatJSONEncoderWrites(key: String) throws {
        let coder = JSONDiskCacheCoder<String, Int>()
        let sortedKeys = JSONEncoder()
        sortedKeys.outputFormatting = [.sortedKeys]
        #expect(try coder.encodeKey(key) == sortedKeys.encode(key))
        #expect(try coder.decodeKey(from: coder.encodeKey(key)) == key)
    }

    @Test func onlyPlainStringsTakeTheDirectPath() {
        #expect(JSONDiskCacheCoder<String, Int>.plainJSON(of: "ada") == Data("\"ada\"".utf8))
        for escaped in ["a\"b", "a\\b", "a/b", "a\nb", "é"] {
            #expect(JSONDiskCacheCoder<String, Int>.plainJSON(of: escaped) == nil, "\(escaped)")
        }
    }

    @Test func otherKeysGoThroughTheEncoder() throws {
        struct Composite: Codable, Equatable {
            var id: Int
            var region: String
        }
        let coder = JSONDiskCacheCoder<Composite, Int>()
        let key = Composite(id: 1, region: "eu")
        #expect(JSONDiskCacheCoder<Composite, Int>.plainJSON(of: key) == nil)
        #expect(try coder.encodeKey(key) == Data(#"{"id":1,"region":"eu"}"#.utf8))
    }
}
