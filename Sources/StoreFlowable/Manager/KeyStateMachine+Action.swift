extension KeyStateMachine {
    /// Who holds, or waits for, the cache-write turn.
    enum WriteTurn {
        case flight(ID)
        case update(ID)
        case page(PageDirection, ID)
        /// An invalidation marking the cached value stale.
        case invalidation(ID)
        /// A reload reading the cache again after a change made outside the manager.
        case reload(ID)
    }

    /// Who receives an emitted state.
    enum Recipients {
        case one(Subscriber)
        case all([ID: Subscriber])
    }

    /// The effects of one transition, run by the caller after it leaves the critical region.
    struct Action {
        /// A state to yield to subscribers.
        var emission: (state: LoadingState<Data>, to: Recipients)?
        /// Waiters to resolve, with the outcome to hand them.
        var resolution: (waiters: [ID: Waiter], outcome: Result<Data, any Error>)?
        /// A flight whose origin call to start, by id.
        var startFlight: ID?
        /// A flight to cancel, by id; its result will be ignored.
        var cancelFlight: ID?
        /// A writer whose turn has come.
        var grantWriter: Writer?
        /// A writer that was superseded and must not write.
        var rejectWriter: Writer?
        /// Page flights whose origin call to start.
        var startPages: [(direction: PageDirection, id: ID)] = []
        /// Page flights to cancel; their results will be ignored.
        var cancelPages: [(direction: PageDirection, id: ID)] = []
        /// Page writers that were superseded and must not write.
        var rejectPageWriters: [Writer] = []
        /// Callers of page requests whose page flight ended (or was dropped).
        var releasePageWaiters: [PageWaiter] = []
        /// What every waiter in ``releasePageWaiters`` is told. One transition ends at most one page
        /// flight with an outcome other than ``PageOutcome/superseded``, so one outcome per action holds.
        var pageOutcome = PageOutcome.superseded

        /// An action with no effect.
        static var none: Action { Action() }

        /// Adds the flight starts, flight cancellations, writer rejections and page-waiter releases of
        /// `other` to this action.
        mutating func merge(_ other: Action) {
            if let start = other.startFlight { startFlight = start }
            if let cancel = other.cancelFlight { cancelFlight = cancel }
            if let reject = other.rejectWriter { rejectWriter = reject }
            startPages += other.startPages
            cancelPages += other.cancelPages
            rejectPageWriters += other.rejectPageWriters
            if !other.releasePageWaiters.isEmpty {
                // Merged actions only ever drop page flights (their waiters are told `superseded`) or
                // come from one page flight's end.
                if releasePageWaiters.isEmpty { pageOutcome = other.pageOutcome }
                releasePageWaiters += other.releasePageWaiters
            }
        }

        /// Whether running this action would do nothing.
        var isEmpty: Bool {
            emission == nil && resolution == nil && startFlight == nil && cancelFlight == nil
                && grantWriter == nil && rejectWriter == nil && startPages.isEmpty && cancelPages.isEmpty
                && rejectPageWriters.isEmpty && releasePageWaiters.isEmpty
        }
    }

    /// What the fetch task does after the origin returned a value.
    enum FetchReturnDecision {
        /// The flight was cancelled or superseded: drop the value.
        case discard
        /// Write the value to the cache now.
        case write
        /// Wait for the writer box to be granted, then write (or drop it if rejected).
        case waitForTurn
    }
}

extension KeyStateMachine.Recipients: Sendable where Subscriber: Sendable {}

extension KeyStateMachine.Action: Sendable
where Waiter: Sendable, Subscriber: Sendable, Writer: Sendable, PageWaiter: Sendable {}
