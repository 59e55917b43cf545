#if canImport(StoreKit)
import Courier
import Foundation
import StoreKit

/// Reads the `BuildChannel` from StoreKit 2's `AppTransaction` (Apple platforms): the signed
/// record of how this copy of the app was obtained. It replaces the deprecated receipt-URL check
/// (`appStoreReceiptURL` ending in `sandboxReceipt`).
///
/// Order: a debug build (``isDebugBuild``) is `BuildChannel.debug` without asking StoreKit;
/// else `AppTransaction.shared`: a *verified* transaction's `environment` maps `.production` →
/// `BuildChannel.appStore`, `.sandbox` → `BuildChannel.testFlight`, `.xcode` →
/// `BuildChannel.xcode`. An unverified transaction (its signature does not check out, so its
/// environment could be forged to unlock staging), an error, an unknown environment value, or no
/// answer within ``deadline`` give `BuildChannel.unknown` with the reason as evidence.
///
/// `AppTransaction` needs iOS 16 / macOS 13 / tvOS 16 / watchOS 9 — Courier's floor — and is still
/// checked with `#available`. Its use here is deliberately thin; the logic that depends on the
/// answer (``EnvironmentSet``) is tested on every platform with ``ProcessBuildChannelDetector``.
public struct AppTransactionBuildChannelDetector: BuildChannelDetecting {
    /// Whether the app is compiled with `DEBUG`.
    public let isDebugBuild: Bool
    /// How long to wait for StoreKit; 5 seconds by default.
    public let deadline: Duration

    /// Creates a detector.
    /// - Parameters:
    ///   - isDebugBuild: Pass `true` from a `#if DEBUG` block of the app.
    ///   - deadline: How long to wait for `AppTransaction.shared` before reporting `unknown`.
    public init(isDebugBuild: Bool, deadline: Duration = .seconds(5)) {
        self.isDebugBuild = isDebugBuild
        self.deadline = deadline
    }

    public func detectChannel() async -> BuildChannelReading {
        if isDebugBuild { return BuildChannelReading(.debug, evidence: "compiled with DEBUG") }
        guard #available(iOS 16, macOS 13, tvOS 16, watchOS 9, *) else {
            return BuildChannelReading(.unknown, evidence: "AppTransaction needs iOS 16 / macOS 13")
        }
        let answer = Locked<CheckedContinuation<BuildChannelReading, Never>?>(nil)
        let deadline = self.deadline
        return await withCheckedContinuation { (continuation: CheckedContinuation<BuildChannelReading, Never>) in
            answer.set(continuation)
            @Sendable func finish(_ reading: BuildChannelReading) {
                let waiting = answer.withLock { state -> CheckedContinuation<BuildChannelReading, Never>? in
                    defer { state = nil }
                    return state
                }
                waiting?.resume(returning: reading)
            }
            let timer = Task {
                // Cancelled once StoreKit answers; finishing twice is harmless (the first one wins).
                guard (try? await Task.sleep(for: deadline)) != nil else { return }
                finish(BuildChannelReading(.unknown, evidence: "AppTransaction did not answer within \(deadline)"))
            }
            Task {
                let reading = await Self.readAppTransaction()
                timer.cancel()
                finish(reading)
            }
        }
    }

    @available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
    private static func readAppTransaction() async -> BuildChannelReading {
        do {
            switch try await AppTransaction.shared {
            case .verified(let transaction):
                return reading(for: transaction.environment)
            case .unverified(let transaction, let error):
                return BuildChannelReading(
                    .unknown,
                    evidence: "AppTransaction unverified (environment \(transaction.environment.rawValue)): \(error)")
            }
        } catch {
            return BuildChannelReading(.unknown, evidence: "AppTransaction failed: \(error)")
        }
    }

    @available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
    private static func reading(for environment: AppStore.Environment) -> BuildChannelReading {
        let evidence = "AppTransaction.environment = \(environment.rawValue)"
        switch environment {
        case .production: return BuildChannelReading(.appStore, evidence: evidence)
        case .sandbox: return BuildChannelReading(.testFlight, evidence: evidence)
        case .xcode: return BuildChannelReading(.xcode, evidence: evidence)
        default: return BuildChannelReading(.unknown, evidence: evidence)
        }
    }
}
#endif
