import Courier
import Foundation

/// An environment named for this run, outside the app: the first source ``EnvironmentSet``
/// consults, so a run scheme or a CI job picks the server without code changes.
///
/// Read from the launch argument `-COURIER_ENV staging` (Xcode: *Arguments Passed On Launch*)
/// or, when there is none, the environment variable `COURIER_ENV=staging` (Xcode: *Environment
/// Variables*; a CI job's environment). Empty values count as absent.
public struct EnvironmentOverride: Sendable, Hashable, CustomStringConvertible {
    /// Where an override came from.
    public enum Origin: Sendable, Hashable {
        /// A launch argument `-COURIER_ENV <id>`.
        case launchArgument
        /// An environment variable `COURIER_ENV=<id>`.
        case environmentVariable
    }

    /// The variable and launch-argument name: `COURIER_ENV`.
    public static let name = "COURIER_ENV"

    /// The environment identifier named.
    public let environmentID: String
    /// Where it came from.
    public let origin: Origin

    /// Creates an override (tests, or an app with its own source).
    package init(environmentID: String, origin: Origin) {
        self.environmentID = environmentID
        self.origin = origin
    }

    /// The override given to the current process, or the given arguments and environment:
    /// `-COURIER_ENV <id>` wins over `COURIER_ENV=<id>`; `nil` when neither is set.
    public static func fromProcess(
        arguments: [String] = ProcessInfo.processInfo.arguments,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> EnvironmentOverride? {
        guard let (value, origin) = LaunchValue.read(name, arguments: arguments, environment: environment) else {
            return nil
        }
        return EnvironmentOverride(
            environmentID: value, origin: origin == .launchArgument ? .launchArgument : .environmentVariable)
    }

    /// `launch argument -COURIER_ENV staging` or `environment variable COURIER_ENV = staging`.
    public var description: String {
        switch origin {
        case .launchArgument: return "launch argument -\(Self.name) \(environmentID)"
        case .environmentVariable: return "environment variable \(Self.name)=\(environmentID)"
        }
    }
}
