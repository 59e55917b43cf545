import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the redirect step lets through when a redirect leaves its origin (RFC 9110 §15.4, origins
/// per RFC 6454 §4): set it on ``APIClient/Configuration/redirects``.
///
/// By default a cross-origin hop drops every secret-bearing header field — `Authorization`,
/// `Proxy-Authorization`, `Cookie`, and every field the client's ``Redactor`` hides
/// (``RedactionList/defaultHeaders``, e.g. `X-API-Key`, plus the app's own additions) — and an
/// `https` → `http` redirect is refused with `URLError(.appTransportSecurityRequiresSecureConnection)`
/// (``NetworkError/transport(_:)``), the error Apple platforms give an insecure load.
///
/// ```swift
/// var configuration = APIClient.Configuration(environment: environment)
/// configuration.redirects.forwardedCredentialHeaders = ["X-Tenant-Token"]  // trusted CDN hop
/// ```
public struct RedirectPolicy: Sendable, Hashable {
    /// Secret-bearing header names (case-insensitive) kept on a hop to another `https` origin.
    /// Empty by default. Never kept on an `https` → `http` hop.
    public var forwardedCredentialHeaders: Set<String>
    /// Whether an `https` → `http` redirect is followed; `false` by default. When `true`, the hop
    /// is followed without any secret-bearing header field.
    public var allowsInsecureRedirects: Bool

    /// Creates a policy; the defaults forward no credentials and refuse `https` → `http`.
    public init(forwardedCredentialHeaders: Set<String> = [], allowsInsecureRedirects: Bool = false) {
        self.forwardedCredentialHeaders = forwardedCredentialHeaders
        self.allowsInsecureRedirects = allowsInsecureRedirects
    }

    /// Forwards no credentials, refuses `https` → `http`.
    public static let `default` = RedirectPolicy()
}

/// A redirect policy with the client's idea of which header fields are secret.
struct RedirectRules: Sendable {
    var policy: RedirectPolicy
    /// The header names the client's redactor hides.
    var secretHeaders: RedactionList

    static let `default` = RedirectRules(policy: .default, secretHeaders: RedactionList.defaultHeaders)

    /// Whether `name` carries a credential that stays on its origin.
    func isSecret(_ name: String) -> Bool {
        RedirectSafety.credentialHeaders.contains { $0.caseInsensitiveCompare(name) == .orderedSame }
            || secretHeaders.matches(name)
    }

    /// Whether `name` may go on to another `https` origin.
    func forwards(_ name: String) -> Bool {
        policy.forwardedCredentialHeaders.contains { $0.caseInsensitiveCompare(name) == .orderedSame }
    }
}
