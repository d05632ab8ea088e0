import Observation

/// How long ``waitUntil(within:_:)`` waits at most.
let observationLimit: Duration = .seconds(20)

/// Returns `true` once `condition` holds, or `false` after `limit`: it is checked now and again after
/// each change of the observable properties it reads (no polling).
@MainActor
func waitUntil(within limit: Duration = observationLimit, _ condition: @escaping @MainActor () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: limit)
    while ContinuousClock.now < deadline {
        let wake = Wake()
        let holds = withObservationTracking({ condition() }) {
            Task { @MainActor in wake.resume() }
        }
        if holds { return true }
        let timer = Task { @MainActor in
            try? await Task.sleep(until: deadline, clock: .continuous)
            wake.resume()
        }
        await wake.wait()
        timer.cancel()
    }
    return condition()
}

/// One wake-up of ``waitUntil(within:_:)``: the first of a change and its deadline resumes it.
@MainActor
private final class Wake {
    private var continuation: CheckedContinuation<Void, Never>?
    private var resumed = false

    /// Returns once ``resume()`` is called (at once if it was already).
    func wait() async {
        if resumed { return }
        await withCheckedContinuation { continuation = $0 }
    }

    /// Ends the wait; later calls do nothing.
    func resume() {
        resumed = true
        continuation?.resume()
        continuation = nil
    }
}

/// Records a value each time `withObservationTracking` reports that what it reads changed, the way a
/// SwiftUI view would be re-rendered (as `ObservedHistory` of the library's tests does): changes made in
/// one main-actor turn count as one.
///
/// It is observable itself, so a test can wait for a value to be recorded with ``waitUntil(within:_:)``.
@MainActor
@Observable
final class ObservedHistory<Value> {
    /// The value when the history started, then the value after each reported change.
    private(set) var values: [Value] = []
    @ObservationIgnored private let read: @MainActor () -> Value

    /// Starts recording what `read` returns.
    init(_ read: @escaping @MainActor () -> Value) {
        self.read = read
        values.append(read())
        track()
    }

    private func track() {
        withObservationTracking {
            _ = read()
        } onChange: { [weak self] in
            Task { @MainActor in self?.changed() }
        }
    }

    private func changed() {
        values.append(read())
        track()
    }
}
