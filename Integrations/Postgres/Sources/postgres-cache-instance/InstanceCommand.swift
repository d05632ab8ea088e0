/// One line of the instance's standard input. Keys are single words; a value is the rest of the line.
enum InstanceCommand: Sendable, Equatable {
    /// `get K`: reads K through the store (`requireData()`) → `got K <value>` or `error K <why>`.
    case get(String)
    /// `gets K N`: N concurrent `requireData()` calls → one `got` or `error` line each.
    case gets(String, count: Int)
    /// `subscribe K`: starts a `publish()` stream → `state K loading|completed|error <content or ->` for
    /// every state it delivers.
    case subscribe(String)
    /// `unsubscribe K`: ends every stream of K → `unsubscribed K`.
    case unsubscribe(String)
    /// `update K V`: replaces K's value through the store → `updated K` or `error K <why>`.
    case update(String, value: String)
    /// `updates K N`: updates K with the values 1…N, one after another → `updated K <i>` after each
    /// (`error K <why>` ends the loop).
    case updates(String, count: Int)
    /// `invalidate K`: marks K's value stale through the store → `invalidated K` or `error K <why>`.
    case invalidate(String)
    /// `reload K`: `KeyedStore.reloadFromCache(forKey:)` → `reloaded K`.
    case reload(String)
    /// `ping` → `pong`.
    case ping
    /// `quit` (or the end of input): ends the streams, shuts the client down, exits 0 after `bye`.
    case quit

    /// Reads a command line.
    ///
    /// - Parameter line: The line, without its newline.
    /// - Returns: The command, or `nil` when the line is not one (the instance answers `bad <line>`).
    init?(_ line: String) {
        let words = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard let verb = words.first else { return nil }
        let key = words.count > 1 && !words[1].isEmpty ? words[1] : nil
        let rest = words.count > 2 ? words[2] : nil
        let count = rest.flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
        switch (verb, key, rest) {
        case ("ping", nil, nil): self = .ping
        case ("quit", nil, nil): self = .quit
        case ("get", let key?, nil): self = .get(key)
        case ("subscribe", let key?, nil): self = .subscribe(key)
        case ("unsubscribe", let key?, nil): self = .unsubscribe(key)
        case ("invalidate", let key?, nil): self = .invalidate(key)
        case ("reload", let key?, nil): self = .reload(key)
        case ("update", let key?, let value?): self = .update(key, value: value)
        case ("gets", let key?, _?):
            guard let count else { return nil }
            self = .gets(key, count: count)
        case ("updates", let key?, _?):
            guard let count else { return nil }
            self = .updates(key, count: count)
        default: return nil
        }
    }
}
