#if canImport(Security)
import Foundation
import Security

/// The Apple adapter of ``ClientCertificateProvider``: a PKCS#12 ``ClientIdentity`` is imported
/// with `SecPKCS12Import` (iOS 2+/macOS 10.6+) and answers `NSURLAuthenticationMethodClientCertificate`
/// with `URLCredential(identity:certificates:persistence:)` (the intermediates of the archive
/// sent along, kept for the session only). PEM identities need `CurlTransport`.
struct SecIdentityCredentials: ClientCertificateProvider {
    func decision(for challenge: URLAuthenticationChallenge, identity: ClientIdentity?) -> ClientCertificateDecision? {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodClientCertificate,
            let identity
        else { return nil }
        guard case .pkcs12(let data, let passphrase) = identity.source else {
            return .refused(Self.failure("PEM client identities need CurlTransport; use a PKCS#12 archive with URLSession"))
        }
        var items: CFArray?
        let status = SecPKCS12Import(data as CFData, [kSecImportExportPassphrase as String: passphrase] as CFDictionary, &items)
        guard status == errSecSuccess, let first = (items as? [[String: Any]])?.first,
            let found = first[kSecImportItemIdentity as String].map({ $0 as AnyObject }),
            CFGetTypeID(found) == SecIdentityGetTypeID()
        else {
            return .refused(Self.failure("the PKCS#12 archive could not be read (OSStatus \(status))"))
        }
        let secIdentity = unsafeDowncast(found, to: SecIdentity.self)
        let chain = (first[kSecImportItemCertChain as String] as? [SecCertificate]) ?? []
        let credential = URLCredential(identity: secIdentity, certificates: Array(chain.dropFirst()), persistence: .forSession)
        return .present(credential)
    }

    private static func failure(_ message: String) -> URLError {
        URLError(.clientCertificateRejected, userInfo: [NSLocalizedDescriptionKey: message])
    }
}
#endif
