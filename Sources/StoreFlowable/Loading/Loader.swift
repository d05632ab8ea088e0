public import Observation

/// Loads one value by key through a store and exposes it, its error and whether a load runs, for a
/// screen or a command to show.
///
/// A loader observes the store of its current key (its `publish()` stream) and mirrors each state in
/// ``object``, ``error``, ``isLoading`` and ``state``. It is `@Observable`: SwiftUI views that read
/// these properties update when they change, and any code can watch them with
/// `withObservationTracking`.
///
/// ```swift
/// let users = KeyedStore(cache: MemoryCache<Int, User>(policy: FreshnessPolicy(freshFor: .seconds(60)))) { id in
///     try await api.user(id: id)
/// }
/// let loader = Loader(users)
/// loader.load(key: 42)   // later: loader.object, loader.error, loader.isLoading
/// ```
///
/// Loaders made over the same ``KeyedStore`` share its state manager, so any number of them loading
/// one key at once cause one origin request, and each sees the same states.
///
/// Promises (each has a test in `LoaderTests`):
/// - A new ``load(key:)`` of another key supersedes the previous one: no state of the superseded load is
///   applied once the call returns, even one already on its way.
/// - ``refresh(key:)`` always fetches from the origin, keeping ``object`` until the new value arrives,
///   and works again after any failure.
/// - Cancellation is never an ``error``: a load or refresh that was cancelled leaves ``error`` as it was.
/// - ``cancel()`` stops this loader's observation and refresh; a request other loaders or callers still
///   wait for goes on for them.
/// - A loader that is released stops observing: it keeps no task, stream or key of the store alive.
///
/// All members run on the main actor.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
@Observable
public final class Loader<Key: Hashable & Sendable, Value: Sendable> {
    /// The key of the current (or last) load; `nil` before the first.
    public private(set) var key: Key?
    /// The value shown: the content of the store's latest state for ``key``.
    ///
    /// It follows the store: it is the cached value while a fetch runs (`nil` when there is none, or when
    /// the cached value is past its `maxAge`), the fetched value once it arrives, and the cached value a
    /// failed fetch leaves in place.
    public private(set) var object: Value?
    /// The error of the last failed load or refresh of ``key``; cleared when a value arrives. Never a
    /// `CancellationError`.
    ///
    /// A state whose error is a `CancellationError` leaves it as it was. The store's
    /// ``StoreFlowableError/originCancelled`` is not a cancellation but a failure (an origin that threw
    /// `CancellationError` although nobody cancelled it, such as a client's timeout), and is shown.
    public private(set) var error: (any Error)?
    /// Whether a load or refresh is running: `true` from ``load(key:)`` or ``refresh(key:)`` until the
    /// store reports a value or an error.
    ///
    /// Each property is assigned only when its value changes, so observers are told of real changes
    /// only: ``object`` and ``state`` when the value's type is `Equatable` (otherwise every new state
    /// counts as a change), ``error`` when the new error is of another type or unequal (by `==` for an
    /// `Equatable` error, else by its reflected description, as ``LoadableState`` compares errors).
    public private(set) var isLoading = false
    /// The store's latest state for ``key``, in full (with the page states of a paged store).
    public private(set) var state: LoadingState<Value>?

    /// Makes the store of a key.
    @ObservationIgnored private let makeStore: @Sendable (Key) -> any StoreFlowable<Value>
    /// The task that applies the states of ``key``'s stream; `nil` when not observing.
    @ObservationIgnored private var observation: Task<Void, Never>?
    /// The task of the running ``refresh(key:)``, if any.
    @ObservationIgnored private var refreshing: Task<Void, Never>?
    /// The number of the latest refresh task: only its end clears ``refreshing``.
    @ObservationIgnored private var refreshNumber: UInt64 = 0
    /// Whether a value or an error arrived since the running refresh started: its outcome is shown,
    /// and a new ``refresh(key:)`` must fetch again rather than join a refresh that is ending.
    @ObservationIgnored private var refreshOutcomeShown = false
    /// Whether ``load(key:)`` of the observed key was called since the last state was applied: if the
    /// stream then ends by itself, that call is honoured by subscribing again.
    @ObservationIgnored private var loadAskedSinceLastState = false
    /// Bumped whenever a load is started or stopped: a state or a refresh's end carrying an older number
    /// belongs to a load that no longer counts and is ignored.
    @ObservationIgnored private var generation: UInt64 = 0

    /// Creates a loader that loads each key through the store `makeStore` returns for it.
    ///
    /// - Parameter makeStore: Returns the store of a key. Stores of one key that share a state manager
    ///   (such as those of one ``KeyedStore``) share its fetch.
    public init(storeFor makeStore: @escaping @Sendable (Key) -> any StoreFlowable<Value>) {
        self.makeStore = makeStore
    }

    /// Creates a loader over the stores of a ``KeyedStore``: values are served from its cache with its
    /// freshness policy, then from its origin.
    ///
    /// - Parameter stores: The stores to load through; every loader made over it shares its fetches.
    public convenience init<Cache: KeyedCache>(_ stores: KeyedStore<Cache>)
    where Cache.Key == Key, Cache.Value == Value {
        self.init(storeFor: { key in stores[key] })
    }

    /// Creates a loader with no cache: every load fetches with `fetch`.
    ///
    /// Loads of one key by this loader while a fetch runs share it. To share fetches between loaders,
    /// or to serve from a cache, make them over one ``KeyedStore`` with ``init(_:)``.
    ///
    /// - Parameter fetch: Fetches the value of a key from the origin.
    public convenience init(fetch: @escaping @Sendable (Key) async throws -> Value) {
        self.init(KeyedStore(cache: MemoryCache<Key, Value>(policy: .alwaysFetch), fetch: fetch))
    }

    deinit {
        // The tasks hold the loader weakly; cancelling them ends the stream, which releases the key.
        observation?.cancel()
        refreshing?.cancel()
    }

    /// Loads the value of `key` and keeps showing its states until another load, ``cancel()`` or the
    /// loader's release.
    ///
    /// Loading the key already being loaded does nothing. Loading another key first stops the current
    /// load (its later states are never applied) and clears ``object``, ``error`` and ``state``.
    ///
    /// - Parameter key: The key to load.
    public func load(key: Key) {
        if observation != nil, self.key == key {
            loadAskedSinceLastState = true
            return
        }
        start(key, forceRefresh: false)
    }

    /// Fetches the value of `key` from the origin, whatever the cache holds, keeping ``object`` shown
    /// until the new value arrives.
    ///
    /// Loads `key` first if it is not the key being loaded. While a refresh runs, another call joins it
    /// (the store fetches once). The outcome reaches ``object`` or ``error`` like any state.
    ///
    /// - Parameter key: The key to refresh.
    public func refresh(key: Key) {
        if observation == nil || self.key != key {
            // Not observing `key` yet: one stream that fetches whatever the cache holds is the refresh.
            start(key, forceRefresh: true)
            return
        }
        setLoading(true)
        // Join the running refresh, unless its outcome is already shown: its task may not have ended
        // yet, but a refresh asked for now must fetch again.
        guard refreshing == nil || refreshOutcomeShown else { return }
        let store = makeStore(key)
        let generation = generation
        refreshNumber &+= 1
        let number = refreshNumber
        refreshOutcomeShown = false
        refreshing = Task { [weak self] in
            await store.refresh()
            self?.refreshEnded(generation, number)
        }
    }

    /// Stops loading: no later state of the current load is applied, and this loader's refresh is
    /// cancelled. ``object`` and ``error`` keep their values; ``isLoading`` becomes `false`.
    ///
    /// A fetch that other loaders or callers wait for goes on for them.
    public func cancel() {
        stop()
        setLoading(false)
    }

    // MARK: Observing

    /// Stops the current load and starts observing `key`, clearing what was shown for another key.
    private func start(_ key: Key, forceRefresh: Bool) {
        stop()
        loadAskedSinceLastState = false
        if self.key != key {
            self.key = key
            setObject(nil)
            if error != nil { error = nil }
            if state != nil { state = nil }
        }
        setLoading(true)
        observe(key, forceRefresh: forceRefresh)
    }

    /// Starts applying the states of `key`'s stream, under a new generation.
    private func observe(_ key: Key, forceRefresh: Bool) {
        generation &+= 1
        let generation = generation
        let stream = makeStore(key).publish(forceRefresh: forceRefresh)
        observation = Task { [weak self] in
            for await state in stream {
                guard let self else { return }
                self.apply(state, generation: generation)
            }
            self?.observationEnded(generation)
        }
    }

    /// The stream of `generation` ended. A store's stream ends only when its task is cancelled (the
    /// load was stopped, and the generation no longer counts), but a stream that finishes by itself
    /// (a custom store's, or a store's refusing a reentrant call) ends the load as ``cancel()`` does,
    /// so that a later ``load(key:)`` or ``refresh(key:)`` of the key subscribes again. A ``load(key:)``
    /// made after the last state but before the end reached the loader (it found the load running) is
    /// honoured now: the loader subscribes again at once.
    private func observationEnded(_ generation: UInt64) {
        guard generation == self.generation else { return }
        if loadAskedSinceLastState, let key {
            start(key, forceRefresh: false)
            return
        }
        cancel()
    }

    /// Cancels the observation and the refresh, so that nothing they bring is applied.
    private func stop() {
        generation &+= 1
        observation?.cancel()
        observation = nil
        refreshing?.cancel()
        refreshing = nil
    }

    /// Mirrors `state` in the observable properties, unless it belongs to a stopped load.
    private func apply(_ state: LoadingState<Value>, generation: UInt64) {
        guard generation == self.generation else { return }
        loadAskedSinceLastState = false
        if !isSameState(self.state, state) { self.state = state }
        switch state {
        case .loading(let content):
            setObject(content)
            setLoading(true)
        case .completed(let content, _, _):
            setObject(content)
            if error != nil { error = nil }
            if refreshing != nil { refreshOutcomeShown = true }
            setLoading(refreshing != nil)
        case .error(let content, let rawError):
            setObject(content)
            if !(rawError is CancellationError) { setError(rawError) }
            if refreshing != nil { refreshOutcomeShown = true }
            setLoading(refreshing != nil)
        }
    }

    /// The refresh `number` of `generation` returned: its outcome has reached the stream.
    private func refreshEnded(_ generation: UInt64, _ number: UInt64) {
        guard generation == self.generation, number == refreshNumber else { return }
        refreshing = nil
        // The stream may have delivered the outcome before the refresh returned; it is the latest state.
        if let state, !state.isLoading { setLoading(false) }
    }

    // Observation reports every assignment, equal or not: assign only what changed, so that a view
    // showing the loader is not updated for nothing.

    private func setLoading(_ loading: Bool) {
        if isLoading != loading { isLoading = loading }
    }

    private func setObject(_ new: Value?) {
        if !isSameValue(object, new) { object = new }
    }

    private func setError(_ new: any Error) {
        if let error, errorsAreEqual(error, new) { return }
        error = new
    }
}
