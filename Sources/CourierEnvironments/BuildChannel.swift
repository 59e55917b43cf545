import Courier
import Foundation

/// A `BuildChannel` together with the evidence it was read from, e.g.
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
    /// Reads the channel. Never fails: anything that cannot be read is `BuildChannel.unknown`
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
        EnvironmentPlatform.buildChannelDetector(isDebugBuild)
    }
}
