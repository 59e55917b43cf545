import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a server's certificate was refused: the one kind every TLS trust failure has, on every
/// transport and platform, so that the UI and the logs can tell "the server could not prove who it
/// is" from a network outage.
///
/// It is read from the `URLError` code Apple platforms use for the same event. Courier's
/// transports report those codes on Linux too: `CurlTransport` from libcurl's result and
/// OpenSSL's verification result, `URLSessionTransport` from the libcurl message
/// FoundationNetworking passes on (which it reports as `URLError.unknown`, -1).
///
/// ```swift
/// do {
///     _ = try await client.send(GetItem(id: 42))
/// } catch let error as NetworkError where error.certificateFailure != nil {
///     showUntrustedServerAlert(error.userMessage)
/// }
/// ```
///
/// A certificate failure is never retried by Courier's retry rules (the server would present the
/// same certificate) and its ``NetworkError/userMessage`` is a sentence of its own.
public enum CertificateFailure: String, Sendable, Hashable, CaseIterable {
    /// The certificate's validity period has ended (`URLError.serverCertificateHasBadDate`).
    case expired
    /// The certificate's validity period has not begun (`URLError.serverCertificateNotYetValid`).
    case notYetValid
    /// The chain does not lead to a trusted authority: a self-signed certificate or one issued by a
    /// certificate authority the client does not trust (`URLError.serverCertificateHasUnknownRoot`).
    case unknownAuthority
    /// Any other reason the certificate is not trusted: issued for another host name, revoked, no
    /// pinned key in the chain (``PinningFailure/pinMismatch(host:presented:)``) —
    /// `URLError.serverCertificateUntrusted`.
    case untrusted

    /// The failure a `URLError` code stands for, or `nil` for a code that is no certificate failure.
    public init?(code: URLError.Code) {
        switch code {
        case .serverCertificateHasBadDate: self = .expired
        case .serverCertificateNotYetValid: self = .notYetValid
        case .serverCertificateHasUnknownRoot: self = .unknownAuthority
        case .serverCertificateUntrusted: self = .untrusted
        default: return nil
        }
    }

    /// The `URLError` code of this failure.
    public var code: URLError.Code {
        switch self {
        case .expired: return .serverCertificateHasBadDate
        case .notYetValid: return .serverCertificateNotYetValid
        case .unknownAuthority: return .serverCertificateHasUnknownRoot
        case .untrusted: return .serverCertificateUntrusted
        }
    }

    /// The code for a libcurl (OpenSSL back end) error message about the server's certificate, as
    /// FoundationNetworking passes it on in `URLError.localizedDescription`; `nil` when the message
    /// is about something else. The texts are libcurl's (`SSL certificate problem: <OpenSSL's
    /// X509_verify_cert_error_string>`, `SSL: no alternative certificate subject name matches
    /// target host name '…'`, `SSL: certificate subject name '…' does not match target host name
    /// '…'`, `SSL: public key does not match pinned public key`), measured with libcurl 7.88 and
    /// OpenSSL 3.0; OpenSSL 1.1 spells "self signed" without the hyphen.
    package static func code(forLibcurlMessage message: String) -> URLError.Code? {
        let text = message.lowercased()
        let problem = "ssl certificate problem:"
        if text.hasPrefix(problem) {
            let reason = text.dropFirst(problem.count).trimmingCharacters(in: .whitespaces)
            if reason.hasPrefix("certificate has expired") { return .serverCertificateHasBadDate }
            if reason.hasPrefix("certificate is not yet valid") { return .serverCertificateNotYetValid }
            let unknownRoot = [
                "self-signed certificate", "self signed certificate", "unable to get local issuer certificate",
                "unable to get issuer certificate", "unable to verify the first certificate",
            ]
            if unknownRoot.contains(where: { reason.hasPrefix($0) }) { return .serverCertificateHasUnknownRoot }
            return .serverCertificateUntrusted
        }
        if text.hasPrefix("ssl: no alternative certificate subject name matches target host name")
            || (text.hasPrefix("ssl: certificate subject name") && text.contains("does not match target host name"))
            || text.hasPrefix("ssl: public key does not match pinned public key")
            || text.hasPrefix("ssl peer certificate or ssh remote key was not ok")
        {
            return .serverCertificateUntrusted
        }
        return nil
    }
}

extension URLError {
    /// The certificate failure this error reports, when its code is one of the four
    /// `serverCertificate…` codes.
    public var certificateFailure: CertificateFailure? { CertificateFailure(code: code) }
}

extension NetworkError {
    /// The certificate failure behind this error (always inside ``NetworkError/transport(_:)``),
    /// or `nil` when the failure is not about the server's certificate.
    public var certificateFailure: CertificateFailure? {
        if case .transport(let error) = self { return error.certificateFailure }
        return nil
    }
}
