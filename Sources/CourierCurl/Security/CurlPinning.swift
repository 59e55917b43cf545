#if canImport(CCurl)
import CCurl
import Courier
import Foundation

extension PinningPolicy {
    /// The pins to check for `host`, or `nil` when the host is not pinned or pinning is bypassed
    /// in this debug build.
    func curlPins(for host: String) -> HostPins? {
        guard !isBypassed else { return nil }
        return pins(for: host)
    }
}

/// Checks a transfer's connection against a host's pins before its request is sent
/// (CURLOPT_PREREQFUNCTION, on every attempt, on a new and on a reused connection alike), with the
/// chain the TLS library **verified** for that connection: the leaf, the intermediates on the
/// verified path and the trust anchor (OpenSSL's `SSL_get0_verified_chain`, reached through
/// `CURLINFO_TLS_SSL_PTR`) — as `SecTrustCopyCertificateChain` after evaluation on Apple platforms.
///
/// Not the chain the server presented (`CURLINFO_CERTINFO`): a server may send any certificate
/// along, and one that holds a certificate the system trusts for the host (mis-issued, a
/// user-installed interception root) could append the genuine server's public certificate and
/// pass a pin on its key. When there is no verified chain to read (libcurl built on another TLS
/// library, an OpenSSL before 1.1.0), a pinned request fails closed.
enum CurlPinCheck {
    /// The OpenSSL functions, looked up once per process.
    private static let openSSL = OpenSSLChainFunctions()

    /// - Returns: `nil` when the request may go, else the pinning failure.
    static func check(_ handle: UnsafeMutableRawPointer, pins: HostPins) -> PinningFailure? {
        let digests = verifiedChainDigests(handle) ?? []
        guard !digests.isEmpty else { return .pinMismatch(host: pins.host, presented: []) }
        if pins.isSatisfied(byDigests: digests) { return nil }
        return .pinMismatch(host: pins.host, presented: digests.map { SPKIPin(digestBytes: $0).base64 })
    }

    /// SHA-256 of each verified certificate's SubjectPublicKeyInfo, leaf first; `nil` when there is
    /// no verified chain to read.
    static func verifiedChainDigests(_ handle: UnsafeMutableRawPointer) -> [[UInt8]]? {
        withUnsafePointer(to: openSSL.functions) { functions -> [[UInt8]]? in
            var chain: UnsafeRawPointer?
            let count = ccurl_verified_chain_count(handle, functions, &chain)
            guard count > 0, let chain else { return nil }
            var digests: [[UInt8]] = []
            var buffer = [UInt8](repeating: 0, count: 16 << 10)
            for index in 0..<count {
                let length = buffer.withUnsafeMutableBufferPointer { bytes in
                    ccurl_verified_chain_spki(functions, chain, index, bytes.baseAddress, Int32(bytes.count))
                }
                guard length > 0 else { return nil }
                digests.append(SPKIPin(subjectPublicKeyInfo: buffer.prefix(Int(length))).digest)
            }
            return digests
        }
    }
}

/// `ccurl_openssl_chain_lookup()`'s function pointers: set once, only read afterwards.
private final class OpenSSLChainFunctions: @unchecked Sendable {
    let functions = ccurl_openssl_chain_lookup()
}

extension CurlTransport: PinEnforcing {
    /// Whether `policy` is this transport's `Configuration.pinning`, which every transfer checks.
    package func enforces(_ policy: PinningPolicy) -> Bool { configuration.pinning == policy }
}
#endif
