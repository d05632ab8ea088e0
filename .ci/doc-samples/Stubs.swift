// The placeholders the guides' samples use without declaring them, so that `.ci/check-doc-samples` can
// compile the samples as written. Every document's module imports this one; a name a sample declares
// itself takes precedence over the one here.
//
// Keep this file short: a sample that needs more than a placeholder for "your code" should declare it.

import StoreFlowable

/// Stands for "your HTTP client" (README, Getting started, Pagination): `api.get(User.self, "/users/42")`.
public struct DocSampleHTTPClient: Sendable {
    /// The error every stubbed request throws: the samples are compiled, never run.
    public struct NotRun: Error {}

    /// Decodes the response body of `GET path` as `type`.
    public func get<Value: Decodable>(_ type: Value.Type, _ path: String) async throws -> Value {
        throw NotRun()
    }
}

/// Your HTTP client.
public let api = DocSampleHTTPClient()

/// Stands for "show this state to the user" (Getting started).
public func render<Content>(_ state: LoadingState<Content>) {}
