import Benchmark
import Foundation
import StoreFlowable

/// A `LoadableController` load awaited in the caller's task, next to the primitive it is built on: a
/// task group running the work beside a second child that waits to be cancelled (the load's stop
/// signal), with the result written under a lock.
func loadingStateBenchmarks() {
    let config = configuration(maxDuration: .seconds(1), mallocTolerance: 4)

    Benchmark("LoadingStates.baseline.taskGroupWithStopSignal", configuration: config) { _ in
        blackHole(await workBesideAStopSignal())
    }

    guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return }
    let controller = LoadableController<Int>()
    Benchmark("LoadingStates.loadAndWait", configuration: config) { benchmark in
        await controller.loadAndWait { 42 }
        if controller.state != .loaded(42) { benchmark.error("the load did not show its value") }
    }
}

/// Runs `{ 42 }` in a task group beside a child that waits on a continuation until the group cancels
/// it, and returns the first result.
private func workBesideAStopSignal() async -> Int {
    await withTaskGroup(of: Int?.self) { group in
        group.addTask { 42 }
        group.addTask {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    stopSignal.set(continuation)
                }
            } onCancel: {
                stopSignal.resume()
            }
            return nil
        }
        var result = 0
        while let next = await group.next() {
            if let next {
                result = next
                break
            }
        }
        group.cancelAll()
        return result
    }
}

/// The stop signal's continuation, resumed once by whichever comes second: its storing or its
/// cancellation (as the controller's runner does, under a lock).
private let stopSignal = StopSignal()

private final class StopSignal: @unchecked Sendable {
    // Safety of `@unchecked Sendable`: `state` is only read or written inside `withLock`, which holds
    // `lock` for the whole access.
    private enum State {
        case idle
        case waiting(CheckedContinuation<Void, Never>)
        case cancelled
    }

    private var state = State.idle
    private let lock = NSLock()

    private func withLock<Result>(_ body: (inout State) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    func set(_ continuation: CheckedContinuation<Void, Never>) {
        let resumeNow = withLock { state -> Bool in
            if case .cancelled = state {
                state = .idle
                return true
            }
            state = .waiting(continuation)
            return false
        }
        if resumeNow { continuation.resume() }
    }

    func resume() {
        let waiting = withLock { state -> CheckedContinuation<Void, Never>? in
            if case .waiting(let continuation) = state {
                state = .idle
                return continuation
            }
            state = .cancelled
            return nil
        }
        waiting?.resume()
    }
}
