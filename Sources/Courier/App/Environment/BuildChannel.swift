/// How the running app was built and installed — the last source ``EnvironmentSet`` consults.
///
/// On Apple platforms `AppTransactionBuildChannelDetector` reads it from StoreKit 2's
/// `AppTransaction.environment`; elsewhere ``ProcessBuildChannelDetector`` reads the
/// `COURIER_BUILD_CHANNEL` variable. A debug build is ``debug`` whatever installed it.
public enum BuildChannel: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Compiled with the `DEBUG` condition (what Xcode's Run action builds).
    case debug
    /// A release build signed for development and run from Xcode (`AppStore.Environment.xcode`).
    case xcode
    /// A build installed through TestFlight (`AppStore.Environment.sandbox`).
    case testFlight
    /// A build installed from the App Store (`AppStore.Environment.production`).
    case appStore
    /// Nothing could tell (a release build on Linux without `COURIER_BUILD_CHANNEL`, StoreKit
    /// unavailable or failing, an unverified app transaction).
    case unknown

    public var description: String {
        switch self {
        case .debug: return "debug build"
        case .xcode: return "release build run from Xcode"
        case .testFlight: return "TestFlight build"
        case .appStore: return "App Store build"
        case .unknown: return "unknown build"
        }
    }
}

/// A ``BuildChannel`` together with the evidence it was read from, e.g.
/// `AppTransaction.environment = sandbox` — part of ``EnvironmentDecision``'s explanation.
public struct BuildChannelReading: Sendable, Hashable, CustomStringConvertible {
    /// The channel.
    public let channel: BuildChannel
    /// What it was read from, for logs.
    public let evidence: String

    /// Creates a reading.
    package init(_ channel: BuildChannel, evidence: String) {
        self.channel = channel
        self.evidence = evidence
    }

    public var description: String { "\(channel) (\(evidence))" }
}

/// Tells how the running app was built: the build source of an ``EnvironmentSet``'s decision.
///
/// Conformers: `AppTransactionBuildChannelDetector` (Apple platforms, StoreKit 2),
/// ``ProcessBuildChannelDetector`` (every platform; environment variable or launch argument).
/// `platformDefault(isDebugBuild:)` picks the right one.
public protocol BuildChannelDetecting: Sendable {
    /// Reads the channel. Never fails: anything that cannot be read is ``BuildChannel/unknown``
    /// with the reason as evidence.
    func detectChannel() async -> BuildChannelReading
}

/// Chooses the build channel detector for the platform.
public enum BuildChannelDetection {
    /// `AppTransactionBuildChannelDetector` where StoreKit exists, else
    /// ``ProcessBuildChannelDetector``.
    ///
    /// - Parameter isDebugBuild: `true` when the *app* is compiled with `DEBUG`. Pass it from a
    ///   `#if DEBUG` block of the app: Courier is a package and cannot see the app's own
    ///   compilation conditions.
    ///
    /// ```swift
    /// #if DEBUG
    /// let detector = BuildChannelDetection.platformDefault(isDebugBuild: true)
    /// #else
    /// let detector = BuildChannelDetection.platformDefault(isDebugBuild: false)
    /// #endif
    /// ```
    public static func platformDefault(isDebugBuild: Bool) -> any BuildChannelDetecting {
        PlatformAdapters.buildChannelDetector(isDebugBuild)
    }
}
