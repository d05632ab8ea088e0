#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether this test process runs under ThreadSanitizer (its runtime's entry point is linked in).
///
/// For this package's own test targets. The random walks over the state machine are pure,
/// single-threaded value code: ThreadSanitizer has nothing to check in them, and at its slowdown they
/// keep both threads of the cooperative pool busy for minutes, starving the tests that do need it. They
/// run in the plain `swift test` run only. Stress tests run fewer rounds under it.
package let isRunningUnderThreadSanitizer: Bool = dlsym(nil, "__tsan_init") != nil
