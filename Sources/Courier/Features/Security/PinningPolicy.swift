/// Which hosts are pinned to which keys — the platform-neutral half of certificate pinning:
/// configuration, validation and matching. ``PinningTransport`` enforces it.
///
/// ```swift
/// let pinning = try PinningPolicy([
///     HostPins(host: "api.example.com", pins: [
///         "n9wAWgmBsYfvyXPWyaIAuryh55GSNUvmk3qvvDcFFaM=",   // current key
///         "mt6CLBG7Uu5u3sdtY83KB03FYUxMEaEHh0q+IJmBHbo=",   // backup key, not yet deployed
///     ]),
/// ])
/// ```
///
/// Pins are checked **after** normal system trust evaluation succeeds — pinning narrows what is
/// trusted, it never lets an untrusted chain through.
public struct PinningPolicy: Sendable, Hashable {
    /// The pinned hosts.
    package let hosts: [HostPins]

    /// When `true` *and Courier is compiled with `DEBUG`*, pins are not checked, so debugging
    /// proxies (Charles, Proxyman) work in development builds. Ignored in release builds: there
    /// pins are always enforced. `false` by default.
    public var bypassesInDebugBuilds: Bool

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - hosts: The pinned hosts, each already validated (two or more pins).
    ///   - bypassesInDebugBuilds: See ``bypassesInDebugBuilds``.
    /// - Throws: ``PinningConfigurationError/duplicateHost(_:)`` when a host appears twice.
    public init(_ hosts: [HostPins], bypassesInDebugBuilds: Bool = false) throws {
        var seen = Set<String>()
        for entry in hosts where !seen.insert(entry.host).inserted {
            throw PinningConfigurationError.duplicateHost(entry.host)
        }
        self.hosts = hosts
        self.bypassesInDebugBuilds = bypassesInDebugBuilds
    }

    /// Creates a policy from a `host → pins` dictionary (no subdomains).
    /// - Throws: ``PinningConfigurationError`` for an invalid host or pin, or a host without a
    ///   backup pin.
    public init(pins: [String: [String]], bypassesInDebugBuilds: Bool = false) throws {
        let hosts = try pins.keys.sorted().map { try HostPins(host: $0, pins: pins[$0] ?? []) }
        try self.init(hosts, bypassesInDebugBuilds: bypassesInDebugBuilds)
    }

    /// Whether pin checks are skipped: ``bypassesInDebugBuilds`` in a `DEBUG` build, never otherwise.
    package var isBypassed: Bool {
        #if DEBUG
        return bypassesInDebugBuilds
        #else
        return false
        #endif
    }

    /// The pins that apply to `host`: an exact entry wins over a parent domain's
    /// `includesSubdomains` entry, and a nearer parent over a farther one. `nil` when the host is
    /// not pinned.
    package func pins(for host: String) -> HostPins? {
        hosts.filter { $0.applies(to: host) }.max { $0.host.count < $1.host.count }
    }

    /// Checks a chain that already passed system trust.
    ///
    /// - Parameters:
    ///   - host: The server's host name.
    ///   - digests: SHA-256 of each certificate's SubjectPublicKeyInfo, leaf first.
    /// - Returns: `nil` when the host is not pinned, the policy is bypassed, or a pinned key is in
    ///   the chain; otherwise ``PinningFailure/pinMismatch(host:presented:)``.
    package func evaluate(host: String, digests: [[UInt8]]) -> PinningFailure? {
        guard !isBypassed, let pins = pins(for: host) else { return nil }
        if pins.isSatisfied(byDigests: digests) { return nil }
        return .pinMismatch(host: HostPins.normalise(host), presented: digests.map { SPKIPin(digestBytes: $0).base64 })
    }
}
