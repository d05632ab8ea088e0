import Foundation

/// The URL of `string`, a literal of the tests that is always a valid URL.
func testURL(_ string: String) -> URL {
    // Safe: only called with literal http://127.0.0.1 URLs, which always parse.
    URL(string: string)!
}

