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
        // A name still not in ASCII could not be converted to the form URLs carry (IDNA, RFC
        // 5891): it would never match a request's host, so the pins would silently not apply.
        guard !normalised.isEmpty, normalised.utf8.allSatisfy({ $0 < 0x80 }),
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

    /// The form a host is compared in: lower-cased, trailing dot and IPv6 brackets removed, an
    /// internationalised name in its ASCII (punycode) form as a URL's host is, an IPv6 address in
    /// its RFC 5952 text (`0:0:0:0:0:0:0:1` and `::1` are one host).
    package static func normalise(_ host: String) -> String {
        var value = host.trimmingCharacters(in: .whitespaces).lowercased()
        if value.hasSuffix(".") { value.removeLast() }
        if value.hasPrefix("["), value.hasSuffix("]") { value = String(value.dropFirst().dropLast()) }
        if value.utf8.contains(where: { $0 >= 0x80 }), let ascii = URL(string: "https://\(value)/")?.host?.lowercased(),
            ascii.utf8.allSatisfy({ $0 < 0x80 })
        {
            value = ascii.hasSuffix(".") ? String(ascii.dropLast()) : ascii
        }
        if value.contains(":"), let groups = IPv6Text.groups(of: value) { value = IPv6Text.canonical(groups) }
        return value
    }

    private static func isIPv6(_ host: String) -> Bool {
        host.contains(":") && host.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
    }
}

/// IPv6 address text: parsing (RFC 4291 §2.2, with an embedded IPv4 tail) and the canonical
/// form (RFC 5952 §4: lower-case hex, no leading zeros, the longest run of two or more zero
/// groups — the first of equal runs — written `::`).
enum IPv6Text {
    /// The eight 16-bit groups of `text`, or `nil` when it is not an IPv6 address.
    static func groups(of text: String) -> [UInt16]? {
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func parse(_ part: String) -> [UInt16]? {
            guard !part.isEmpty else { return [] }
            var result: [UInt16] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, piece.contains(".") {
                    let octets = piece.split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
                    guard octets.count == 4, piece.split(separator: ".", omittingEmptySubsequences: false).count == 4
                    else { return nil }
                    result += [UInt16(octets[0]) << 8 | UInt16(octets[1]), UInt16(octets[2]) << 8 | UInt16(octets[3])]
                } else {
                    guard (1...4).contains(piece.count), let group = UInt16(piece, radix: 16) else { return nil }
                    result.append(group)
                }
            }
            return result
        }
        guard let head = parse(halves[0]) else { return nil }
        if halves.count == 1 { return head.count == 8 ? head : nil }
        guard let tail = parse(halves[1]), head.count + tail.count < 8 else { return nil }
        return head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
    }

    /// The RFC 5952 text of eight groups.
    static func canonical(_ groups: [UInt16]) -> String {
        var best = (start: -1, length: 1)
        var index = 0
        while index < groups.count {
            guard groups[index] == 0 else {
                index += 1
                continue
            }
            var end = index
            while end < groups.count, groups[end] == 0 { end += 1 }
            if end - index > best.length { best = (index, end - index) }
            index = end
        }
        let hex = groups.map { String($0, radix: 16) }
        guard best.start >= 0 else { return hex.joined(separator: ":") }
        let head = hex[..<best.start].joined(separator: ":")
        let tail = hex[(best.start + best.length)...].joined(separator: ":")
        return head + "::" + tail
    }
}
