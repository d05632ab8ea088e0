import Observation

/// Records a value each time `withObservationTracking` reports that what it reads changed, the way a
/// SwiftUI view would be re-rendered.
///
/// Observation reports a change once and must then be asked again; the history re-registers on the
/// main actor right after each report, so changes made in one main-actor turn count as one (as they do
/// for a view).
@MainActor
final class ObservedHistory<Value> {
    /// The value when the history started, then the value after each reported change.
    private(set) var values: [Value] = []
    /// How many changes were reported.
    private(set) var changes = 0
    private let read: @MainActor () -> Value

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
        changes += 1
        values.append(read())
        track()
    }
}
