import StoreFlowable

/// Formats a state on one line, like `completed(content: Ada rev 1)`.
///
/// The demo formats states itself rather than relying on a description the library may provide.
func describe<Content>(_ state: LoadingState<Content>) -> String {
    switch state {
    case .loading(let content):
        "loading(content: \(describe(content)))"
    case .completed(let content, _, _):
        "completed(content: \(content))"
    case .error(let content, let rawError):
        "error(content: \(describe(content)), rawError: \(rawError))"
    }
}

/// Formats an optional value as its description, or `nil`.
func describe<Value>(_ value: Value?) -> String {
    value.map { value in String(describing: value) } ?? "nil"
}

/// Formats a data state on one line, like `error(HTTP 503 (simulated))`.
func describe(_ state: DataState) -> String {
    switch state {
    case .fixed: "fixed"
    case .loading: "loading"
    case .error(let error): "error(\(error))"
    }
}

/// Formats a duration as whole milliseconds, right-aligned for a column of stamps: `+ 42 ms`.
func stamp(_ elapsed: Duration) -> String {
    let milliseconds = String(microseconds(elapsed) / 1000)
    return "+" + String(repeating: " ", count: max(1, 4 - milliseconds.count)) + milliseconds + " ms"
}

/// Formats a duration in milliseconds with three decimals: `0.004 ms`, `41.270 ms`.
func milliseconds(_ elapsed: Duration) -> String {
    let micro = microseconds(elapsed)
    let fraction = String(micro % 1000)
    return "\(micro / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction + " ms"
}

/// Formats a count with a comma between groups of three digits: `10,000`.
func grouped(_ count: Int) -> String {
    let digits = String(count.magnitude)
    var result = ""
    for (index, digit) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
        result.append(digit)
    }
    return count < 0 ? "-" + result : result
}

/// The whole number of microseconds in `duration`.
private func microseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
}

/// Consumes a `publish()` stream in its own task, printing every state as it arrives with the time
/// since `start`, and passes the states on so the tour can wait for them before printing more.
struct StateWatcher<Content: Sendable> {
    private let task: Task<Void, Never>
    private var received: AsyncStream<LoadingState<Content>>.Iterator

    /// Starts consuming `stream`, printing each state as `format` shows it (by default, with
    /// `describe(_:)`).
    init(
        _ stream: AsyncStream<LoadingState<Content>>, since start: ContinuousClock.Instant,
        format: @escaping @Sendable (LoadingState<Content>) -> String = { state in describe(state) }
    ) {
        let (forwarded, continuation) = AsyncStream.makeStream(of: LoadingState<Content>.self)
        task = Task {
            for await state in stream {
                print("  \(stamp(start.duration(to: .now)))  \(format(state))")
                continuation.yield(state)
            }
            continuation.finish()
        }
        received = forwarded.makeAsyncIterator()
    }

    /// Waits until the next state has been printed, and returns it.
    mutating func next() async -> LoadingState<Content>? {
        await received.next()
    }

    /// Ends the subscription, as leaving a `for await` loop would.
    func stop() {
        task.cancel()
    }
}

extension String {
    /// The string followed by spaces up to `width` characters.
    func padding(to width: Int) -> String {
        self + String(repeating: " ", count: max(0, width - count))
    }

    /// The string preceded by spaces up to `width` characters.
    func padding(toLeading width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}
