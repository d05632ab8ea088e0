/// An instance process did not answer as the test expected: no matching line in time, it ended, or a
/// command could not be sent. The description carries the end of the process's transcript.
struct InstanceFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
