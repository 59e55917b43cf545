import Foundation

/// The one place that picks what the running platform's URLSession can do and which adapters
/// talk to its Apple-only frameworks. Everything else asks for these values, so both behaviours
/// compile on Linux and tests run the Apple one there with injected values.
package enum PlatformAdapters {
    // The one platform choice; each adapter below is declared once, made from the type named here.
    #if canImport(FoundationNetworking)
    private static let platformCapabilities = TransportCapabilities.foundationNetworking
    private typealias ServerTrust = NoServerTrustEvaluator
    private typealias ClientCertificates = NoClientCertificates  // none are raised
    private typealias BoundStreams = NoBoundStreamPairs
    private typealias Backgrounds = ProcessBoundSessions
    #else
    private static let platformCapabilities = TransportCapabilities.apple
    private typealias ServerTrust = SecTrustEvaluator
    private typealias ClientCertificates = SecIdentityCredentials  // `SecPKCS12Import`, `URLCredential`
    private typealias BoundStreams = FoundationBoundStreamPairs
    private typealias Backgrounds = SystemBackgroundSessions
    #endif

    /// The capabilities of the URLSession this process runs.
    static let capabilities = platformCapabilities
    /// How server-trust challenges are checked against pins.
    static let serverTrust: any ServerTrustEvaluator = ServerTrust()
    /// How client-certificate challenges are answered.
    static let clientCertificates: any ClientCertificateProvider = ClientCertificates()
    /// Where bound stream pairs for streamed request bodies come from.
    static let boundStreams: any BoundStreamPairs = BoundStreams()
    /// How background session configurations are made.
    package static let backgroundSessions: any BackgroundSessions = Backgrounds()
}

extension TransportCapabilities {
    /// The capabilities of the URLSession this process runs (``apple`` or ``foundationNetworking``).
    package static var current: TransportCapabilities { PlatformAdapters.capabilities }
}
