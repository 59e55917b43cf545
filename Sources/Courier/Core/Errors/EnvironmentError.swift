import Foundation

/// Why an `EnvironmentSet` could not be built, switched or remembered, or why a client could not
/// be built for it. Messages name environments and files but never carry credentials.
public enum EnvironmentError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError, DescribedError {
    /// An environment identifier or storage namespace is empty, longer than 64 characters, or uses
    /// characters other than ASCII letters, digits, `.`, `_` and `-` (it becomes part of file names,
    /// Keychain accounts and launch arguments).
    case invalidIdentifier(String)
    /// Two environments of a set share this identifier or storage namespace.
    case duplicateIdentifier(String)
    /// A set was declared without environments.
    case noEnvironments
    /// An override, a build mapping or a switch names an environment the set does not have.
    case unknownEnvironment(String, known: [String])
    /// The environment has no base URL for this API (see ``APIEnvironment/baseURLs``).
    case missingBaseURL(environment: String, api: String)
    /// A base URL is not an absolute http(s) URL with a host.
    case invalidBaseURL(environment: String, api: String, url: String)
    /// The set refuses run-time switching in this build (see `EnvironmentSwitching`); `current`
    /// is the environment that stays in use.
    case switchingForbidden(current: String, channel: BuildChannel)
    /// The `EnvironmentChoiceStore` failed; `operation` is `load`, `save` or `clear`.
    case storeFailed(operation: String, reason: String)
    /// Two environments of one client would share session state (cookie storage, token store,
    /// token manager or cache partition): tokens or cookies of one could reach the other's server.
    case sharedSessionState(String)

    public var description: String {
        switch self {
        case .invalidIdentifier(let id):
            return "environment identifier \(id.debugDescription) is invalid: use 1...64 ASCII letters, digits, '.', '_' or '-'"
        case .duplicateIdentifier(let id):
            return "environment identifier or storage namespace '\(id)' is used twice"
        case .noEnvironments:
            return "an environment set needs at least one environment"
        case .unknownEnvironment(let id, let known):
            return "no environment '\(id)' (known: \(known.joined(separator: ", "))): an override (-COURIER_ENV, COURIER_ENV), "
                + "a switch or the set's BuildMapping names it; the default mapping names development, staging and "
                + "production, so a set without all three passes `mapping:` with its own identifiers"
        case .missingBaseURL(let environment, let api):
            return "environment '\(environment)' has no base URL for API '\(api)'"
        case .invalidBaseURL(let environment, let api, let url):
            return "base URL '\(url)' of API '\(api)' in environment '\(environment)' is not an absolute http(s) URL"
        case .switchingForbidden(let current, let channel):
            return "switching environments is forbidden in this build (\(channel)); staying on '\(current)'"
        case .storeFailed(let operation, let reason):
            return "environment choice \(operation) failed: \(reason)"
        case .sharedSessionState(let reason):
            return "environments would share session state: \(reason)"
        }
    }
}
