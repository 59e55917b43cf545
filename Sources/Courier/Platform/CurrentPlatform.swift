import Foundation

/// The one place that picks what the running platform's URLSession can do and which adapters
/// talk to its Apple-only frameworks. Everything else asks for these values, so both behaviours
/// compile on Linux and tests run the Apple one there with injected values.
package enum PlatformAdapters {
    #if canImport(FoundationNetworking)
    /// The capabilities of the URLSession this process runs.
    static let capabilities = TransportCapabilities.foundationNetworking
    /// How server-trust challenges are checked against pins.
    static let serverTrust: any ServerTrustEvaluator = NoServerTrustEvaluator()
    /// How client-certificate challenges are answered (none are raised).
    static let clientCertificates: any ClientCertificateProvider = NoClientCertificates()
    /// Where bound stream pairs for streamed request bodies come from.
    static let boundStreams: any BoundStreamPairs = NoBoundStreamPairs()
    /// How background session configurations are made.
    package static let backgroundSessions: any BackgroundSessions = ProcessBoundSessions()
    #else
    /// The capabilities of the URLSession this process runs.
    static let capabilities = TransportCapabilities.apple
    /// How server-trust challenges are checked against pins.
    static let serverTrust: any ServerTrustEvaluator = SecTrustEvaluator()
    /// How client-certificate challenges are answered (`SecPKCS12Import`, `URLCredential`).
    static let clientCertificates: any ClientCertificateProvider = SecIdentityCredentials()
    /// Where bound stream pairs for streamed request bodies come from.
    static let boundStreams: any BoundStreamPairs = FoundationBoundStreamPairs()
    /// How background session configurations are made.
    package static let backgroundSessions: any BackgroundSessions = SystemBackgroundSessions()
    #endif
}

extension TransportCapabilities {
    /// The capabilities of the URLSession this process runs (``apple`` or ``foundationNetworking``).
    package static var current: TransportCapabilities { PlatformAdapters.capabilities }
}
