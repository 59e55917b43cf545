import Foundation

/// How the running app was built and installed — the last source `EnvironmentSet` consults.
///
/// On Apple platforms `AppTransactionBuildChannelDetector` reads it from StoreKit 2's
/// `AppTransaction.environment`; elsewhere `ProcessBuildChannelDetector` reads the
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
