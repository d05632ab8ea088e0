extension LoadingState {
    /// The state a paged store shows for this state of its cached record: the record's data as the
    /// content, and each direction that is not loading or failed reported as
    /// `.fixed(canRequestAdditionalData:)` according to the record's cursor.
    ///
    /// - Parameter isTwoWay: Whether the previous direction pages; for one-way paging it is always
    ///   `.fixed(canRequestAdditionalData: false)`.
    /// - Returns: The state with the record's data as its content.
    func presentingPages<Data: Sendable, Cursor: Sendable>(isTwoWay: Bool) -> LoadingState<Data>
    where Content == PagedData<Data, Cursor> {
        switch self {
        case .loading(let record):
            return .loading(content: record?.data)
        case .error(let record, let error):
            return .error(content: record?.data, rawError: error)
        case .completed(let record, let next, let prev):
            return .completed(
                content: record.data,
                next: next.withCursor(record.nextCursor != nil),
                prev: isTwoWay ? prev.withCursor(record.prevCursor != nil) : .noMoreData)
        }
    }
}

extension AdditionalLoadingState {
    /// This state, with "nothing loading" turned into whether a cursor allows another page.
    func withCursor(_ hasCursor: Bool) -> AdditionalLoadingState {
        if case .fixed = self { return .fixed(canRequestAdditionalData: hasCursor) }
        return self
    }
}
