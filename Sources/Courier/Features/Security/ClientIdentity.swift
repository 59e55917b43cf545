import Foundation

/// A client certificate and its private key, presented when a server asks for one during the TLS
/// handshake (mutual TLS: RFC 8446 §4.3.2 CertificateRequest, §4.4.2 the client's Certificate).
///
/// Which transports can present one: `CurlTransport` (both kinds, per host:
/// `CurlTransport.Configuration.clientIdentities`) and, on Apple platforms,
/// ``URLSessionTransport`` (``pkcs12(_:passphrase:)`` only: it becomes the `URLCredential` with a
/// `SecIdentity` that answers `NSURLAuthenticationMethodClientCertificate` challenges). URLSession
/// on Linux cannot present one (see <doc:PlatformDifferences>).
///
/// ```swift
/// let identity = ClientIdentity.pkcs12(try Data(contentsOf: URL(fileURLWithPath: "client.p12")), passphrase: "secret")
/// let pemIdentity = ClientIdentity.pemFiles(
///     certificate: URL(fileURLWithPath: "client-cert.pem"), privateKey: URL(fileURLWithPath: "client-key.pem"))
/// ```
public struct ClientIdentity: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// Where the certificate and key come from.
    package enum Source: Sendable, Hashable {
        /// A PKCS#12 archive (RFC 7292) holding the certificate (and any intermediates) and the key.
        case pkcs12(Data, passphrase: String)
        /// PEM files: the certificate (optionally followed by intermediates) and the private key,
        /// encrypted with `passphrase` when one is given.
        case pemFiles(certificate: URL, privateKey: URL, passphrase: String?)
    }

    /// Where the certificate and key come from.
    package let source: Source

    /// An identity from a PKCS#12 archive (`.p12`/`.pfx`, RFC 7292), the form Keychain and
    /// `openssl pkcs12 -export` write.
    ///
    /// - Parameters:
    ///   - data: The archive's bytes.
    ///   - passphrase: The archive's password.
    public static func pkcs12(_ data: Data, passphrase: String) -> ClientIdentity {
        ClientIdentity(source: .pkcs12(data, passphrase: passphrase))
    }

    /// An identity from PEM files (`CurlTransport` only; on Apple platforms ``URLSessionTransport``
    /// fails such a request with `URLError(.clientCertificateRejected)`).
    ///
    /// - Parameters:
    ///   - certificate: The client certificate, optionally followed by its intermediates.
    ///   - privateKey: The private key (PKCS#8 or the algorithm's own PEM form).
    ///   - passphrase: The key's passphrase when it is encrypted; `nil` for a plain key.
    public static func pemFiles(certificate: URL, privateKey: URL, passphrase: String? = nil) -> ClientIdentity {
        ClientIdentity(source: .pemFiles(certificate: certificate, privateKey: privateKey, passphrase: passphrase))
    }

    /// The kind and file names, never the key material or passphrase.
    public var description: String {
        switch source {
        case .pkcs12(let data, _): "ClientIdentity(PKCS#12, \(data.count) bytes)"
        case .pemFiles(let certificate, let key, _):
            "ClientIdentity(PEM \(certificate.lastPathComponent), key \(key.lastPathComponent))"
        }
    }

    /// What `dump(_:)` and the debugger show: the ``description``, never the archive's bytes or
    /// the passphrase.
    public var customMirror: Mirror {
        Mirror(self, children: ["source": description], displayStyle: .struct)
    }
}
