import Courier
import Foundation

/// Which environment an ``EnvironmentSet`` uses and why — a value to log at launch and to show in
/// a debug menu.
///
/// ```swift
/// print("environment: \(environments.decision)")
/// // staging — chosen by launch argument -COURIER_ENV staging; build: TestFlight build (AppTransaction.environment = sandbox)
/// ```
///
/// The decision order is: an ``EnvironmentOverride`` (`-COURIER_ENV` / `COURIER_ENV`), else the
/// choice persisted by an earlier ``EnvironmentSet/switchEnvironment(to:)``, else the build
/// (`BuildChannel` through the set's ``BuildMapping``). When switching is forbidden in this
/// build (``EnvironmentSwitching``) only the build decides; the ignored sources are listed in
/// ``notes``.
public struct EnvironmentDecision: Sendable, Hashable, CustomStringConvertible {
    /// The source that chose the environment.
    public enum Source: Sendable, Hashable, CustomStringConvertible {
        /// An override for this run.
        case override(EnvironmentOverride)
        /// The choice saved by an earlier switch, read from the ``EnvironmentChoiceStore``.
        case persisted
        /// The build channel through the ``BuildMapping``.
        case build
        /// A switch made in this process.
        case switched

        public var description: String {
            switch self {
            case .override(let override): return override.description
            case .persisted: return "the choice saved by an earlier switch"
            case .build: return "the build"
            case .switched: return "a switch at run time"
            }
        }
    }

    /// The environment chosen.
    public let environmentID: String
    /// What chose it.
    public let source: Source
    /// The build channel read at launch (known whatever the source).
    public let build: BuildChannelReading
    /// Sources that were present but not used, and why, in decision order — e.g.
    /// `persisted choice 'qa' ignored: no such environment`.
    public let notes: [String]

    /// Creates a decision.
    package init(environmentID: String, source: Source, build: BuildChannelReading, notes: [String] = []) {
        self.environmentID = environmentID
        self.source = source
        self.build = build
        self.notes = notes
    }

    /// One line: `<id> — chosen by <source>; build: <channel> (<evidence>)[; <notes>]`.
    public var description: String {
        var text = "\(environmentID) — chosen by \(source); build: \(build)"
        if !notes.isEmpty { text += "; " + notes.joined(separator: "; ") }
        return text
    }
}

/// Maps each `BuildChannel` to the environment a build of that kind uses when nothing else
/// decides. The defaults follow the usual three servers: a debug build → `development`; a release
/// build from Xcode or TestFlight → `staging`; the App Store → `production`; an unknown channel →
/// `production` (a release build that cannot tell where it came from is treated as shipped).
public struct BuildMapping: Sendable, Hashable {
    /// For `BuildChannel.debug`.
    public var debug: String
    /// For `BuildChannel.xcode`.
    public var xcode: String
    /// For `BuildChannel.testFlight`.
    public var testFlight: String
    /// For `BuildChannel.appStore`.
    public var appStore: String
    /// For `BuildChannel.unknown`.
    public var unknown: String

    /// Creates a mapping; every parameter has the default described on ``BuildMapping``.
    public init(
        debug: String = "development", xcode: String = "staging", testFlight: String = "staging",
        appStore: String = "production", unknown: String = "production"
    ) {
        self.debug = debug
        self.xcode = xcode
        self.testFlight = testFlight
        self.appStore = appStore
        self.unknown = unknown
    }

    /// The environment identifier for `channel`.
    package func environmentID(for channel: BuildChannel) -> String {
        switch channel {
        case .debug: return debug
        case .xcode: return xcode
        case .testFlight: return testFlight
        case .appStore: return appStore
        case .unknown: return unknown
        }
    }

    /// Every identifier the mapping names.
    var allIDs: [String] { [debug, xcode, testFlight, appStore, unknown] }
}

/// Whether an ``EnvironmentSet`` may leave the environment its build chose.
public enum EnvironmentSwitching: Sendable, Hashable {
    /// Overrides, persisted choices and run-time switches are honoured in every build.
    case allowed
    /// Only App Store builds are locked (the default): there the build alone decides,
    /// ``EnvironmentSet/switchEnvironment(to:)`` throws `EnvironmentError.switchingForbidden(current:channel:)`,
    /// and overrides and persisted choices are ignored (and listed in ``EnvironmentDecision/notes``).
    /// A build whose channel could not be read (`BuildChannel.unknown`: an unverified transaction,
    /// StoreKit offline at launch) is locked too, as the shipped build it may be: a choice
    /// persisted by an earlier TestFlight install must not point an App Store build at staging.
    case forbiddenInAppStoreBuilds
    /// Every build is locked to the environment its build channel maps to.
    case forbidden

    /// Whether a build of `channel` is locked.
    package func isLocked(_ channel: BuildChannel) -> Bool {
        switch self {
        case .allowed: return false
        case .forbiddenInAppStoreBuilds: return channel == .appStore || channel == .unknown
        case .forbidden: return true
        }
    }
}

/// What happens to the session of the environment being left by a switch.
public enum SessionsOnSwitch: Sendable, Hashable {
    /// Each environment keeps its own session (tokens, cookies, cache) and finds it again when
    /// switched back to. Sessions are never shared either way.
    case kept
    /// The session of the environment being left is reset (`APIClient.resetSession(also:)` on
    /// that environment's lane of every client built for the set): switching signs out.
    case signedOut
}
