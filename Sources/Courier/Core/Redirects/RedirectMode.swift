import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What one call does with a redirect (RFC 9110 §15.4): set it on ``RequestOptions/redirects``
/// or with ``Request/redirects(_:)``.
///
/// Whatever the mode, a hop that is followed goes through the same rules: the method and body
/// rewrite of 301/302/303, the credential fields a cross-origin hop drops and the `https` → `http`
/// refusal (``RedirectPolicy``), and the 20-hop limit. The mode only decides *whether* to follow.
///
/// A redirect that is not followed (``doNotFollow``, or ``RedirectDecision/stop``) is the call's
/// response — not an error — whatever statuses the endpoint accepts: read its `Location` with
/// `Request<HTTPResponse>` or `Request<Void>` through ``APIClient/response(for:)-(E)``.
/// Such a call neither reads nor stores the HTTP cache (a stored answer could be the end of the
/// chain it stops before) and is never shared with another caller's identical request.
///
/// ```swift
/// // A sign-in page that answers 302 with the app's callback URL: read it, do not follow it.
/// let answer = try await client.response(for: Request<Void>.get("/oauth/authorize").redirects(.doNotFollow))
/// let callback = answer.response.headers["Location"]
///
/// // Follow only hops that stay on our own hosts.
/// let report: Data = try await client.send(
///     Request<Data>.get("/reports/latest").redirects(.decide { hop in
///         hop.to.host?.hasSuffix(".example.com") == true ? .follow : .fail(reason: "left example.com")
///     }))
/// ```
public enum RedirectMode: Sendable {
    /// Follow every redirect Courier can follow safely. The default.
    case follow
    /// Follow none: a 301, 302, 303, 307 or 308 is the call's response.
    case doNotFollow
    /// Ask `decide` before each hop (on the call's task; it may suspend). It sees the hop after
    /// Courier's own checks, so a hop Courier refuses (`https` → `http`) never reaches it.
    case decide(@Sendable (RedirectHop) async -> RedirectDecision)

    /// Whether every safe redirect is followed without asking.
    public var followsAll: Bool {
        if case .follow = self { return true }
        return false
    }
}

/// One redirect a call is about to follow, as ``RedirectMode/decide(_:)`` sees it.
public struct RedirectHop: Sendable, Hashable {
    /// The URL that answered with the redirect.
    public let from: URL
    /// The URL the next request would go to (the `Location` resolved against ``from``).
    public let to: URL
    /// The redirect's status: 301, 302, 303, 307 or 308.
    public let statusCode: Int
    /// Which hop of the call this is: 1 for the first redirect.
    public let number: Int
    /// The method the next request would use (`GET` after a 303, or a 301/302 of a `POST`).
    public let method: String
    /// Whether the next request goes to another origin (scheme, host and port; RFC 6454 §4), so
    /// that its credential fields were dropped (see ``RedirectPolicy``).
    public let isCrossOrigin: Bool
    /// The redirect response (its body is not read).
    public let response: HTTPResponse

    /// Creates a hop (for tests of a decision closure).
    public init(
        from: URL, to: URL, statusCode: Int, number: Int, method: String, isCrossOrigin: Bool, response: HTTPResponse
    ) {
        self.from = from
        self.to = to
        self.statusCode = statusCode
        self.number = number
        self.method = method
        self.isCrossOrigin = isCrossOrigin
        self.response = response
    }

    public static func == (lhs: RedirectHop, rhs: RedirectHop) -> Bool {
        lhs.from == rhs.from && lhs.to == rhs.to && lhs.statusCode == rhs.statusCode && lhs.number == rhs.number
            && lhs.method == rhs.method
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(from)
        hasher.combine(to)
        hasher.combine(statusCode)
        hasher.combine(number)
    }
}

/// What ``RedirectMode/decide(_:)`` answers for one hop.
public enum RedirectDecision: Sendable, Hashable {
    /// Send the next request.
    case follow
    /// Stop here: the redirect response is the call's response.
    case stop
    /// Fail the call with ``NetworkError/redirectRefused(_:)``, carrying the hop and `reason`.
    case fail(reason: String)
}

/// A redirect the app's ``RedirectMode/decide(_:)`` refused (``NetworkError/redirectRefused(_:)``).
public struct RedirectRefusal: Sendable, Hashable, CustomStringConvertible {
    /// The refused hop.
    public let hop: RedirectHop
    /// The app's reason.
    public let reason: String

    /// Creates a refusal.
    public init(hop: RedirectHop, reason: String) {
        self.hop = hop
        self.reason = reason
    }

    /// The hop with both URLs redacted (a `Location` often carries an OAuth `code` or a token in
    /// its query; descriptions reach logs and crash reports). ``hop`` keeps them whole.
    public var description: String {
        let redactor = Redactor()
        return "\(hop.statusCode) from \(redactor.redact(url: hop.from)) to \(redactor.redact(url: hop.to)) "
            + "(hop \(hop.number)): \(reason)"
    }
}

extension RequestContext {
    /// This call's redirect mode (``RequestOptions/redirects``); ``RedirectMode/follow`` unless
    /// the client set another one.
    public internal(set) var redirectMode: RedirectMode {
        get { withRedirectMode { $0 } }
        set { withRedirectMode { $0 = newValue } }
    }

    /// Whether `response` is a redirect this call chose not to follow: the caller gets it as the
    /// response, whatever its ``StatusValidation``. Read off the mode and the response (a call that
    /// follows every redirect ends at a 3xx only when it cannot be followed, which stays an error).
    func isStoppedRedirect(_ response: HTTPResponse) -> Bool {
        guard !redirectMode.followsAll, [301, 302, 303, 307, 308].contains(response.statusCode) else { return false }
        return response.headers["Location"] != nil
    }
}
