@testable import StoreFlowable

/// A call of `BatchedOrigin.load` in a task of its own. Awaiting its outcome from a test that is
/// cancelled (at its time limit) cancels the call, so that a caller never answered fails the test
/// instead of hanging it.
struct BatchCaller: Sendable {
    let task: Task<String, any Error>

    init(_ task: Task<String, any Error>) {
        self.task = task
    }

    init(of origin: BatchedOrigin<Int, String>, key: Int) {
        self.init(Task { try await origin.load(key) })
    }

    /// The value the call returned.
    var value: String {
        get async throws {
            try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        }
    }

    /// What the call returned or threw.
    var result: Result<String, any Error> {
        get async {
            do {
                return .success(try await value)
            } catch {
                return .failure(error)
            }
        }
    }

    func cancel() {
        task.cancel()
    }
}
