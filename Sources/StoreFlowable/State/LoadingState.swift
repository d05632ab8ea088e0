/// The state of one piece of data as a store reports it: loading, completed, or failed, always with
/// the content the cache holds, if any.
///
/// `publish()` streams values of this type. The content travels with every state, so a screen or a
/// log line can keep showing the last good value while a refresh is loading or after it failed.
public enum LoadingState<Content: Sendable>: Sendable {
    /// The origin is being fetched.
    ///
    /// - Parameter content: What the cache held when the fetch started (possibly stale), or `nil` when
    ///   the cache was empty.
    case loading(content: Content?)
    /// The data is present and nothing is loading for it.
    ///
    /// - Parameters:
    ///   - content: The current value.
    ///   - next: The state of loading the next page (always `.fixed(canRequestAdditionalData: false)`
    ///     without pagination).
    ///   - prev: The state of loading the previous page (always `.fixed(canRequestAdditionalData: false)`
    ///     without pagination).
    case completed(content: Content, next: AdditionalLoadingState, prev: AdditionalLoadingState)
    /// The last fetch (or cache write) failed.
    ///
    /// - Parameters:
    ///   - content: The last good value the store knows of; a failure never removes it.
    ///   - rawError: The error that caused the failure.
    case error(content: Content?, rawError: any Error)

    /// A completed state whose next and previous directions have nothing more to load.
    ///
    /// - Parameter content: The current value.
    /// - Returns: `.completed(content: content, next: .noMoreData, prev: .noMoreData)`.
    public static func completed(_ content: Content) -> LoadingState {
        .completed(content: content, next: .noMoreData, prev: .noMoreData)
    }
}
