import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLError.Code {
    /// Whether sending the same request to the same server again would fail the same way: the
    /// server's reply cannot be read as HTTP (`cannotParseResponse`, e.g. a response head over the
    /// transport's limits; `badServerResponse`), the URL is refused (`badURL`, `unsupportedURL`), a
    /// redirect loop or a redirect to nowhere, a response over the transport's size limit or in a
    /// coding it cannot undo, the server's certificate is refused (expired, not yet valid, unknown
    /// root, untrusted) or the server refuses the client's certificate.
    ///
    /// Every other transport failure may pass: connection-level ones (cannot connect, DNS,
    /// connection lost, a TLS handshake cut off) and those the transport cannot name
    /// (`URLError.unknown`, which URLSession on Linux reports for most libcurl failures).
    /// The offline queue dead-letters a mutation that failed so; a Server-Sent Events feed ends
    /// with the error instead of reconnecting (WHATWG HTML §9.2.3 lets a client fail the
    /// connection when reestablishing it is futile).
    package var repeatsWhenSentAgain: Bool { Self.repeating.contains(self) }

    private static let repeating: Set<URLError.Code> = [
        .cannotParseResponse, .badServerResponse, .badURL, .unsupportedURL, .httpTooManyRedirects,
        .redirectToNonExistentLocation, .dataLengthExceedsMaximum, .cannotDecodeContentData, .cannotDecodeRawData,
        .serverCertificateHasBadDate, .serverCertificateUntrusted, .serverCertificateHasUnknownRoot,
        .serverCertificateNotYetValid, .clientCertificateRejected, .clientCertificateRequired,
        .appTransportSecurityRequiresSecureConnection,
    ]
}
