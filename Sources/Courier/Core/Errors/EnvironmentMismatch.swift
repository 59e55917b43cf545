/// A call that had to go to one environment found its client pointed at another, and was not
/// sent (see `APIClient.response(for:context:requiredEnvironment:)`). Thrown for Courier's own
/// modules only: the offline queue holds or discards the mutation instead of delivering it
/// elsewhere.
package struct EnvironmentMismatch: Error, Sendable, Hashable, CustomStringConvertible {
    /// The ``APIEnvironment/name`` the call belongs to.
    package var required: String
    /// The name of the environment the client would have sent it to.
    package var current: String

    package init(required: String, current: String) {
        self.required = required
        self.current = current
    }

    package var description: String { "made for environment '\(required)', the client now sends to '\(current)'" }
}
