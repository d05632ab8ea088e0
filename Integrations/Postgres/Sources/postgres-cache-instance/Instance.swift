import StoreFlowable
import StoreFlowablePostgres

/// One server instance of the tests: a store over the shared `PostgresCache`, driven by line commands
/// (see ``InstanceCommand``), answering one line per event on standard output.
struct Instance: Sendable {
    /// The store; its fetch is the ``Origin``.
    let store: KeyedStore<PostgresCache<String, String>>
    /// The running streams.
    let subscriptions = Subscriptions()

    /// Runs the commands of `lines`, each in a task of its own, until `quit` or the end of input; then
    /// cancels the commands still running and ends every stream.
    ///
    /// - Parameter lines: The command lines.
    func serve(_ lines: AsyncStream<String>) async {
        await withTaskGroup(of: Void.self) { group in
            for await line in lines {
                guard let command = InstanceCommand(line) else {
                    say("bad \(line)")
                    continue
                }
                if command == .quit { break }
                group.addTask { await run(command) }
            }
            group.cancelAll()
        }
        await subscriptions.endAll()
    }

    /// Runs one command and prints its answers.
    ///
    /// - Parameter command: Anything but `quit`.
    func run(_ command: InstanceCommand) async {
        switch command {
        case .get(let key):
            await get(key)
        case .gets(let key, let count):
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<count { group.addTask { await get(key) } }
            }
        case .subscribe(let key):
            let stream = store[key].publish()
            let reader = Task {
                for await state in stream { say(Self.line(for: state, of: key)) }
            }
            await subscriptions.add(reader, for: key)
        case .unsubscribe(let key):
            await subscriptions.end(key)
            say("unsubscribed \(key)")
        case .update(let key, let value):
            if await update(key, to: value) { say("updated \(key)") }
        case .updates(let key, let count):
            for number in 1...count {
                guard !Task.isCancelled, await update(key, to: String(number)) else { return }
                say("updated \(key) \(number)")
            }
        case .invalidate(let key):
            do {
                try await store[key].invalidate()
                say("invalidated \(key)")
            } catch {
                say("error \(key) \(error)")
            }
        case .reload(let key):
            await store.reloadFromCache(forKey: key)
            say("reloaded \(key)")
        case .ping:
            say("pong")
        case .quit:
            break
        }
    }

    /// Reads `key` through the store and prints `got K <value>` or `error K <why>`.
    ///
    /// - Parameter key: The key.
    private func get(_ key: String) async {
        do {
            say("got \(key) \(try await store[key].requireData())")
        } catch {
            say("error \(key) \(error)")
        }
    }

    /// Replaces the value of `key` with `value`, printing `error K <why>` when that fails.
    ///
    /// The transforming `update` is used, not `update(newData:)`, because it throws when the cache
    /// could not be read or written (`update(newData:)` only tells subscribers).
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - value: The new value.
    /// - Returns: Whether the value was written.
    private func update(_ key: String, to value: String) async -> Bool {
        do {
            try await store[key].update { _ in value }
            return true
        } catch {
            say("error \(key) \(error)")
            return false
        }
    }

    /// The line printed for a state of a `subscribe` stream.
    ///
    /// - Parameters:
    ///   - state: The state.
    ///   - key: The stream's key.
    /// - Returns: `state K loading|completed|error <content or ->`.
    static func line(for state: LoadingState<String>, of key: String) -> String {
        switch state {
        case .loading(let content): "state \(key) loading \(content ?? "-")"
        case .completed(let content, _, _): "state \(key) completed \(content)"
        case .error(let content, _): "state \(key) error \(content ?? "-")"
        }
    }
}
