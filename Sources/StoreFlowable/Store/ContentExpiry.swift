/// When the values of a cache stop being usable: its policy's `maxAge`, on its clock.
struct ContentExpiry: Sendable {
    /// The age from which a value is never shown.
    let maxAge: Duration
    /// The cache's clock.
    let clock: any CacheClock

    /// The clock's time now.
    var now: CacheTime { clock.now }

    /// When a value stored at `storedAt` stops being usable.
    func usableUntil(ofValueStoredAt storedAt: CacheTime) -> CacheTime {
        storedAt.advanced(by: maxAge)
    }

    /// When a value written now stops being usable. Taken just before the write, it is never later than
    /// the written entry's own `storedAt + maxAge`.
    func usableUntilOfValueWrittenNow() -> CacheTime {
        usableUntil(ofValueStoredAt: clock.now)
    }

    /// Whether `deadline` has passed.
    func hasPassed(_ deadline: CacheTime) -> Bool {
        clock.now >= deadline
    }
}
