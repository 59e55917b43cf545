import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A pinning configuration that Courier refuses to use.
public enum PinningConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The host has fewer than two distinct pins. RFC 7469 §4.3: a pin set must include a backup
    /// pin — a key not in the current chain — or the day the key rotates every installed copy of
    /// the app stops working.
    case missingBackupPin(host: String)
    /// A pin is not the base64 encoding of exactly 32 bytes (a SHA-256 digest).
    case invalidPin(host: String, pin: String)
    /// The host is empty or not a bare host name (it has a scheme, port, path or wildcard).
    case invalidHost(String)
    /// The same host appears twice.
    case duplicateHost(String)

    public var description: String {
        switch self {
        case .missingBackupPin(let host):
            return "pinning for \(host) needs at least two distinct pins: the current key and a backup (RFC 7469 §4.3)"
        case .invalidPin(let host, let pin):
            return "pin '\(pin)' for \(host) is not a base64 SHA-256 digest (32 bytes)"
        case .invalidHost(let host):
            return "'\(host)' is not a bare host name (no scheme, port, path or wildcard; use includesSubdomains)"
        case .duplicateHost(let host):
            return "\(host) is pinned twice"
        }
    }
}

/// Why a connection to a pinned host was refused. Reaches callers as
/// ``NetworkError/transport(_:)`` with a `URLError` whose ``Foundation/URLError/pinningFailure``
/// is this value (code `.serverCertificateUntrusted`, or `.secureConnectionFailed` for
/// ``unsupportedPlatform(host:)`` and ``insecureScheme(host:)``).
public enum PinningFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The chain passed system trust, but none of its public keys is pinned for the host
    /// (RFC 7469 §2.6). `presented` lists the chain's pins (base64 SHA-256), leaf first, to
    /// compare with the configuration.
    case pinMismatch(host: String, presented: [String])
    /// System trust evaluation failed before pins were checked: pinning adds to trust, it never
    /// replaces it.
    case systemTrustFailed(host: String, reason: String)
    /// The platform gives no hook to check pins (Linux URLSession has no server-trust challenge),
    /// so the request to a pinned host was not sent: fail closed rather than silently unpinned.
    case unsupportedPlatform(host: String)
    /// A plain `http` request to a pinned host: there is no certificate to pin.
    case insecureScheme(host: String)
    /// The session already answers server-trust challenges itself, so pins could not be enforced;
    /// nothing was sent.
    case trustHandledElsewhere(host: String)
    /// The environment pins the host (``APIEnvironment/pins``), but the client's transport does not
    /// enforce those pins (a transport installed in place of Courier's ``PinningTransport``, without
    /// them); nothing was sent.
    case transportIgnoresPins(host: String)

    /// The host the failure is about.
    public var host: String {
        switch self {
        case .pinMismatch(let host, _), .systemTrustFailed(let host, _), .unsupportedPlatform(let host),
            .insecureScheme(let host), .trustHandledElsewhere(let host), .transportIgnoresPins(let host):
            return host
        }
    }

    public var description: String {
        switch self {
        case .pinMismatch(let host, let presented):
            return
                "certificate pinning failed for \(host): no pinned key in the chain (presented: \(presented.joined(separator: ", ")))"
        case .systemTrustFailed(let host, let reason):
            return "certificate for \(host) is not trusted: \(reason)"
        case .unsupportedPlatform(let host):
            return "\(host) is pinned, but this platform cannot check certificate pins; request refused"
        case .insecureScheme(let host):
            return "\(host) is pinned, but the request is not HTTPS; request refused"
        case .trustHandledElsewhere(let host):
            return "\(host) is pinned, but the URLSession's delegate handles server trust itself; request refused"
        case .transportIgnoresPins(let host):
            return
                "\(host) is pinned by the environment, but the client's transport does not enforce those pins "
                + "(use PinningTransport(policy: environment.pins), or CurlTransport with Configuration.pinning); request refused"
        }
    }
}

extension PinningFailure: URLErrorPayload {
    /// `serverCertificateUntrusted` for a chain that failed a check, `secureConnectionFailed` for a
    /// request refused before any certificate was seen.
    package var urlErrorCode: URLError.Code {
        switch self {
        case .pinMismatch, .systemTrustFailed: .serverCertificateUntrusted
        case .unsupportedPlatform, .insecureScheme, .trustHandledElsewhere, .transportIgnoresPins: .secureConnectionFailed
        }
    }

    /// The `URLError.userInfo` key under which the failure travels.
    package static let userInfoKey = "CourierPinningFailure"
}

extension URLError {
    /// The certificate-pinning failure behind this error, when Courier's pinning refused the
    /// connection.
    public var pinningFailure: PinningFailure? { payload(PinningFailure.self) }
}

extension NetworkError {
    /// The certificate-pinning failure behind this error, when Courier's pinning refused the
    /// connection (always inside ``NetworkError/transport(_:)``).
    public var pinningFailure: PinningFailure? { payload(PinningFailure.self) }
}
