import Foundation

/// The URL of `string`, a literal of the tests that is always a valid URL.
func testURL(_ string: String) -> URL {
    guard let url = URL(string: string) else { preconditionFailure("not a URL: \(string)") }
    return url
}
