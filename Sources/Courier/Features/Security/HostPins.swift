import Foundation

/// The pins of one host (RFC 7469 §2.1): the keys its certificate chain may contain, at least one
/// of them a backup.
public struct HostPins: Sendable, Hashable {
    /// The host, lower-cased, without a trailing dot, e.g. `api.example.com` or `127.0.0.1`.
    package let host: String
    /// Whether subdomains of ``host`` are pinned too (`includeSubDomains`, RFC 7469 §2.1.2).
    package let includesSubdomains: Bool
    /// The accepted keys; a chain passes when any of its certificates has one of them.
    package let pins: Set<SPKIPin>

    /// Creates and validates the pins of one host.
    ///
    /// - Parameters:
    ///   - host: A bare host name or IP address (no scheme, port, path or `*`).
    ///   - pins: Base64 SHA-256 SPKI digests: the current key and at least one backup.
    ///   - includesSubdomains: Whether subdomains are pinned too; `false` by default.
    /// - Throws: ``PinningConfigurationError``: ``PinningConfigurationError/invalidHost(_:)``,
    ///   ``PinningConfigurationError/invalidPin(host:pin:)``, or
    ///   ``PinningConfigurationError/missingBackupPin(host:)`` when fewer than two distinct pins
    ///   are given (RFC 7469 §4.3).
    public init(host: String, pins: [String], includesSubdomains: Bool = false) throws {
        let normalised = Self.normalise(host)
        guard !normalised.isEmpty,
            !normalised.contains(where: { "/:*@?# ".contains($0) }) || Self.isIPv6(normalised)
        else {
            throw PinningConfigurationError.invalidHost(host)
        }
        var parsed = Set<SPKIPin>()
        for pin in pins {
            do {
                parsed.insert(try SPKIPin(base64: pin))
            } catch {
                throw PinningConfigurationError.invalidPin(host: normalised, pin: pin)
            }
        }
        guard parsed.count >= 2 else { throw PinningConfigurationError.missingBackupPin(host: normalised) }
        self.host = normalised
        self.pins = parsed
        self.includesSubdomains = includesSubdomains
    }

    /// Whether these pins apply to `host`: the same host, or a subdomain when
    /// ``includesSubdomains``.
    package func applies(to host: String) -> Bool {
        let candidate = Self.normalise(host)
        return candidate == self.host || (includesSubdomains && candidate.hasSuffix("." + self.host))
    }

    /// Whether a chain with these SPKI SHA-256 digests satisfies the pins: at least one digest is
    /// pinned (RFC 7469 §2.6).
    package func isSatisfied(byDigests digests: [[UInt8]]) -> Bool {
        digests.contains { pins.contains(SPKIPin(digestBytes: $0)) }
    }

    /// Lower-cased, trailing dot removed, IPv6 brackets removed.
    package static func normalise(_ host: String) -> String {
        var value = host.trimmingCharacters(in: .whitespaces).lowercased()
        if value.hasSuffix(".") { value.removeLast() }
        if value.hasPrefix("["), value.hasSuffix("]") { value = String(value.dropFirst().dropLast()) }
        return value
    }

    private static func isIPv6(_ host: String) -> Bool {
        host.contains(":") && host.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
    }
}
