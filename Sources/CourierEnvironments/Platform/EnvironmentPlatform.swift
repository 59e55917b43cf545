import Courier
import Foundation

/// The one place that picks this module's platform adapters: how the build channel is read and
/// where the chosen environment is remembered. Everything else asks for these values, so both
/// behaviours compile on Linux.
enum EnvironmentPlatform {
    #if canImport(FoundationNetworking)
    /// The build channel detector, given whether this is a debug build.
    static let buildChannelDetector: @Sendable (Bool) -> any BuildChannelDetecting = {
        ProcessBuildChannelDetector(isDebugBuild: $0)
    }
    /// Where the chosen environment is remembered, given the app's name.
    static let environmentChoiceStore: @Sendable (String) -> any EnvironmentChoiceStore = {
        EnvironmentChoiceStores.configFileStore(appName: $0)
    }
    #else
    /// The build channel detector (StoreKit's `AppTransaction`), given whether this is a debug build.
    static let buildChannelDetector: @Sendable (Bool) -> any BuildChannelDetecting = {
        AppTransactionBuildChannelDetector(isDebugBuild: $0)
    }
    /// Where the chosen environment is remembered (`UserDefaults`), given the app's name.
    static let environmentChoiceStore: @Sendable (String) -> any EnvironmentChoiceStore = { _ in
        UserDefaultsEnvironmentChoiceStore()
    }
    #endif
}
