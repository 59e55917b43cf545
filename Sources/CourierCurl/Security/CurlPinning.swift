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

/// The pin verdict of each of a transport's open connections, by socket: a reused connection
/// carries no certificate chain (libcurl gathers `CURLINFO_CERTINFO` only on the transfer that made
/// the connection), so a request on it passes only when the connection passed when it was made.
/// A new connection on the same socket number is checked again and replaces the verdict.
/// Read and written by libcurl's callbacks under the engine's lock; the lock here makes it safe
/// whatever thread runs them.
final class CurlPinnedConnections: Sendable {
    private let verdicts = Locked([Int32: Bool]())

    /// Checks a transfer that is about to send its request (CURLOPT_PREREQFUNCTION): the chain
    /// of a new connection against `pins`, or the recorded verdict of a reused one.
    ///
    /// - Returns: `nil` when the request may go, else the pinning failure.
    func check(_ handle: UnsafeMutableRawPointer, pins: HostPins) -> PinningFailure? {
        var socket = curl_socket_t(-1)
        _ = ccurl_easy_getinfo_socket(handle, &socket)
        let digests = CurlPinnedConnections.chainDigests(handle)
        guard !digests.isEmpty else {
            // A reused connection: its verdict from when it was made.
            if verdicts.withLock({ $0[Int32(socket)] }) == true { return nil }
            return .pinMismatch(host: pins.host, presented: [])
        }
        let passed = pins.isSatisfied(byDigests: digests)
        verdicts.withLock { $0[Int32(socket)] = passed }
        return passed ? nil : .pinMismatch(host: pins.host, presented: digests.map { SPKIPin(digestBytes: $0).base64 })
    }

    /// SHA-256 of each certificate's SubjectPublicKeyInfo in the chain the server presented, leaf
    /// first (`CURLINFO_CERTINFO`); empty when libcurl gathered none (a reused connection).
    static func chainDigests(_ handle: UnsafeMutableRawPointer) -> [[UInt8]] {
        var raw: UnsafeMutableRawPointer?
        guard ccurl_easy_getinfo_pointer(handle, CURLINFO_CERTINFO, &raw) == CURLE_OK, let raw else { return [] }
        let info = raw.assumingMemoryBound(to: curl_certinfo.self).pointee
        guard info.num_of_certs > 0, let chain = info.certinfo else { return [] }
        var digests: [[UInt8]] = []
        for index in 0..<Int(info.num_of_certs) {
            var entry = chain[index]
            while let node = entry {
                if let text = node.pointee.data,
                    let der = CurlErrorMapping.certificateDER(fromCertInfoLine: String(cString: text)),
                    let pin = SPKIPin(certificateDER: der)
                {
                    digests.append(pin.digest)
                }
                entry = node.pointee.next
            }
        }
        return digests
    }
}
#endif
