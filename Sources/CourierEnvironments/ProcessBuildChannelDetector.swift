import Courier
import Foundation

/// Reads the `BuildChannel` from the process: the Linux (and server, and test) counterpart of
/// `AppTransactionBuildChannelDetector`.
///
/// Order: a debug build (``isDebugBuild``) is `BuildChannel.debug`; else the launch argument
/// `-COURIER_BUILD_CHANNEL <value>`; else the environment variable `COURIER_BUILD_CHANNEL`; else
/// `BuildChannel.unknown`. Values are the case names, case-insensitively: `debug`, `xcode`,
/// `testflight`, `appstore` (an unrecognised value is `unknown`, with the value in the evidence).
public struct ProcessBuildChannelDetector: BuildChannelDetecting {
    /// The variable and launch-argument name: `COURIER_BUILD_CHANNEL`.
    public static let name = "COURIER_BUILD_CHANNEL"

    /// Whether the app is compiled with `DEBUG`.
    public let isDebugBuild: Bool
    /// The launch arguments read (the process's by default).
    public let arguments: [String]
    /// The environment variables read (the process's by default).
    public let environment: [String: String]

    /// Creates a detector reading the current process's arguments and environment, or the given ones.
    public init(
        isDebugBuild: Bool,
        arguments: [String] = ProcessInfo.processInfo.arguments,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.isDebugBuild = isDebugBuild
        self.arguments = arguments
        self.environment = environment
    }

    public func detectChannel() async -> BuildChannelReading {
        reading()
    }

    /// The synchronous reading behind ``detectChannel()``.
    func reading() -> BuildChannelReading {
        if isDebugBuild { return BuildChannelReading(.debug, evidence: "compiled with DEBUG") }
        if let (value, origin) = LaunchValue.read(Self.name, arguments: arguments, environment: environment) {
            let channel = BuildChannel.allCases.first { $0.rawValue.lowercased() == value.lowercased() } ?? .unknown
            return BuildChannelReading(channel, evidence: "\(origin.spelling(Self.name)) \(value)")
        }
        return BuildChannelReading(.unknown, evidence: "release build; \(Self.name) not set")
    }
}

/// A value given to the process by a launch argument (`-NAME value`, Xcode's "Arguments Passed
/// On Launch", which also feeds the `UserDefaults` argument domain) or an environment variable.
enum LaunchValue {
    /// Where a launch value came from.
    enum Origin: Sendable, Hashable {
        case launchArgument
        case environmentVariable

        /// `-NAME` or `NAME=`, as written in a run scheme.
        func spelling(_ name: String) -> String {
            switch self {
            case .launchArgument: return "launch argument -\(name)"
            case .environmentVariable: return "environment variable \(name) ="
            }
        }
    }

    /// The launch argument `-name value` (last one wins, as with `UserDefaults`), else the
    /// environment variable `name`; empty or whitespace-only values count as absent.
    static func read(_ name: String, arguments: [String], environment: [String: String]) -> (String, Origin)? {
        var fromArguments: String?
        var index = arguments.startIndex
        while index < arguments.endIndex {
            if arguments[index] == "-\(name)", index + 1 < arguments.endIndex {
                fromArguments = arguments[index + 1]
                index += 2
            } else {
                index += 1
            }
        }
        if let value = fromArguments?.trimmingCharacters(in: .whitespaces), !value.isEmpty {
            return (value, .launchArgument)
        }
        if let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty {
            return (value, .environmentVariable)
        }
        return nil
    }
}
