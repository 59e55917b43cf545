import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Adds `Authorization: Bearer <access token>` (RFC 6750 §2.1) as the endpoint's
/// ``EndpointPolicy/auth`` asks, and recovers once from a 401 by refreshing the token.
///
/// - ``AuthRequirement/none``: the request passes untouched.
/// - ``AuthRequirement/required``: the token from ``TokenManager/validAccessToken()`` is added.
///   Without one (nobody signed in) the call fails locally with ``NetworkError/signedOut`` and
///   nothing is sent.
/// - ``AuthRequirement/optional``: the token is added when there is one (and the session is not
///   expired); otherwise the request goes out anonymously.
///
/// On a 401 whose `Bearer` challenge reports an invalid or expired token, or no error code
/// (RFC 6750 §3.1; see `refreshes(after:)`) — or a response the call's own check recognises as a refused token (a GraphQL
/// `UNAUTHENTICATED` error, see `CourierGraphQL`) — the token the request carried is handed to
/// `TokenManager.refresh(failedToken:)` (which does not refresh again when someone else already
/// did) and the request is sent once
/// more with the new token. A call is auth-retried at most once, however many times the outer
/// ``RetryInterceptor`` runs it; a second 401 is returned as is, and so is a 401 to a request
/// whose one-shot body stream was already sent (``BodyStream``) — after the token was refreshed
/// all the same, so later calls do not carry the refused token. Re-sending after a 401 is safe
/// for every method: the server refused the request without applying it.
///
/// A call that gets no token — the refresh failed (its ``NetworkError``: a 503 from the token
/// endpoint is ``NetworkError/server(_:)``), the ``TokenManager`` holds refreshes back after such a
/// failure (``NetworkError/backendUnavailable(host:retryAfter:)``), the session ended or the store
/// cannot be read — ends with that error. The ``RetryInterceptor`` does not repeat it (another
/// attempt would only ask the token endpoint again, which the token manager schedules itself) and
/// does not count it against the request's host: a failing token endpoint never opens the API's
/// circuit breaker, nor pauses the API's host with its `Retry-After`.
///
/// Every attempt of a call goes out under one sign-in: a retry whose first attempt carried a
/// token of a sign-in that ended since (a sign-out and another sign-in during the backoff) ends
/// with ``NetworkError/signedOut`` and is not sent, rather than acting as the next user.
///
/// Position: see ``Swift/Array/standard(tokenManager:cache:logger:redactor:recorders:metrics:retry:)``.
public struct AuthInterceptor: Interceptor {
    /// ``PipelineCapabilities/authentication``.
    public var capabilities: PipelineCapabilities { .authentication }

    /// The session the tokens come from.
    package let tokenManager: TokenManager

    /// Creates the interceptor.
    public init(tokenManager: TokenManager) {
        self.tokenManager = tokenManager
    }

    /// The context slot marking that the call already spent its one auth retry.
    private enum AuthRetriedKey: RequestContextKey { typealias Value = Bool }

    /// Marks the attempt's error as the auth step's own (no token to be had) and returns it.
    private static func failedGettingToken(_ error: any Error, context: RequestContext) -> any Error {
        context[AuthStepFailureKey.self] = true
        return error
    }

    /// A call whose ``SignInRequirement`` does not hold: marked in the context (the client turns
    /// it into ``SignInMismatch``), failed as ``NetworkError/signedOut`` for the layers above.
    private static func refusedSignIn(context: RequestContext) -> any Error {
        context[SignInMismatchKey.self] = true
        return failedGettingToken(NetworkError.signedOut, context: context)
    }

    /// - Throws: ``NetworkError/signedOut`` when the endpoint requires
    ///   a token and nobody is signed in; ``NetworkError/sessionExpired`` when the refresh token was
    ///   refused; the refresh's ``NetworkError`` when it failed transiently; ``NetworkError/signedOut``
    ///   also, with nothing sent, when a call made for one account (an offline queue's mutation)
    ///   would carry a token of another sign-in; whatever `next` throws.
    public func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        let requirement = context.policy.auth
        guard requirement != .none else { return try await next(request) }

        // A call made for one account (a queued mutation): the sign-in number is read before the
        // account, so a token paired with that number is that account's (see SignInRequirement).
        var requiredSession: Int?
        if let account = context[SignInRequirementKey.self] {
            let session = tokenManager.currentSession
            guard account.isCurrentAccount(), account.session.map({ $0 == session }) ?? true else {
                throw Self.refusedSignIn(context: context)
            }
            requiredSession = session
        }
        let current: (token: String, session: Int)?
        do {
            current = try await tokenManager.accessTokenAndSession()
        } catch NetworkError.sessionExpired where requirement == .optional {
            current = nil
        } catch NetworkError.signedOut where requirement == .optional {
            current = nil  // signed out while a refresh was awaited: sent without a token
        } catch {
            // Another sign-in (or a sign-out) while the token was awaited: the call's account is gone.
            if let requiredSession, tokenManager.currentSession != requiredSession {
                throw Self.refusedSignIn(context: context)
            }
            throw Self.failedGettingToken(error, context: context)
        }
        guard let (token, session) = current else {
            if requirement == .required { throw Self.failedGettingToken(NetworkError.signedOut, context: context) }
            return try await next(request)
        }
        // The token belongs to a sign-in that came after the account was checked (during a refresh
        // the call waited for, or since): sent, the call would act as that user.
        if let requiredSession, session != requiredSession { throw Self.refusedSignIn(context: context) }
        // A later attempt of this call (a retry after its backoff) whose first attempt carried a
        // token of another sign-in: a sign-out and another sign-in came in between, and sent, the
        // call made for the first user would act as (and answer with the data of) the next one.
        if let earlier = context[SignInSessionKey.self], earlier != session {
            throw Self.failedGettingToken(NetworkError.signedOut, context: context)
        }

        var request = request
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        context[SignInSessionKey.self] = session
        let response = try await next(request)
        guard Self.rejectsToken(response, context: context), Self.cameFromTokenOrigin(response, sentTo: request),
            context[AuthRetriedKey.self] != true
        else { return response }

        // Marked only once a new token is in hand. A refresh that failed throws its own error
        // (never this 401): the retry layer ends the call with it.
        context.emit(.tokenRefreshStarted)
        let refreshed: String
        do {
            // The request's sign-in is over. Its session expired (or was signed out) and nobody
            // signed in since: the call ends as every call of that session does, whether its 401
            // came before or after the refresh was refused. Another user signed in: the 401 is
            // the answer (sent again with the new sign-in's token, it would act as that user).
            guard let token = try await tokenManager.refresh(failedToken: token, session: session) else {
                context.emit(.tokenRefreshEnded(succeeded: false))
                if let ended = await tokenManager.outcome(ofEnded: session) {
                    throw Self.failedGettingToken(ended, context: context)
                }
                return response
            }
            refreshed = token
        } catch {
            context.emit(.tokenRefreshEnded(succeeded: false))
            throw Self.failedGettingToken(error, context: context)
        }
        context.emit(.tokenRefreshEnded(succeeded: true))
        context[AuthRetriedKey.self] = true
        // A one-shot body was spent: the 401 is the answer. The token was still refreshed, so the
        // next call goes out with the new one instead of the token the server refused.
        guard context.canResendBody else { return response }
        try Task.checkCancellation()
        request.setValue("Bearer \(refreshed)", forHTTPHeaderField: "Authorization")
        return try await next(request)
    }

    /// Whether `response` says the access token was refused, so a new one may help: a 401 whose
    /// challenges allow it (``refreshes(after:)``), or what the call's
    /// ``RequestContext/rejectsAccessToken`` check recognises (a GraphQL `UNAUTHENTICATED` error
    /// in a 200).
    static func rejectsToken(_ response: HTTPResponse, context: RequestContext) -> Bool {
        (response.statusCode == 401 && refreshes(after: response.headers))
            || context.rejectsAccessToken?(response) == true
    }

    /// Whether `response` came from the origin the token was sent to (RFC 6454 §4). A redirect to
    /// another origin drops `Authorization` (`RedirectSafety`), so a 401 from there refused no
    /// token of ours: refreshing would rotate the refresh token and replay the chain into the same
    /// 401, on every call. (A target that ``RedirectPolicy/forwardedCredentialHeaders`` lets the
    /// token reach gets no refresh either: its 401 is the call's answer.) A response without a URL
    /// (a stub) counts as the token's origin.
    static func cameFromTokenOrigin(_ response: HTTPResponse, sentTo request: URLRequest) -> Bool {
        guard let answered = response.url, let asked = request.url else { return true }
        return RedirectSafety.isSameOrigin(answered, asked)
    }

    /// Whether a 401 with these header fields is worth a token refresh (RFC 6750 §3.1, RFC 9110
    /// §11.6.1): its `Bearer` challenge says `error="invalid_token"` (invalid or expired) or
    /// gives no error code. Another error code (`invalid_request`, `insufficient_scope`), or
    /// challenges none of which is `Bearer` (the resource wants `Basic`), never refresh. A 401
    /// without any `WWW-Authenticate` (common in APIs that skip it) refreshes.
    static func refreshes(after headers: HTTPHeaders) -> Bool {
        let challenges = AuthenticationChallenge.challenges(in: headers)
        guard !challenges.isEmpty else { return true }
        return challenges.contains { challenge in
            guard challenge.isScheme("Bearer") else { return false }
            guard let error = challenge["error"] else { return true }
            return error == "invalid_token"
        }
    }
}

/// The context slot marking an attempt that ended in ``AuthInterceptor`` without a token: the
/// token manager's refresh failed (or is held back), the session ended, the store could not be
/// read. Set by the auth step, read and cleared by ``RetryInterceptor``, which neither repeats
/// such an attempt nor counts it against the request's host (and sets it again when the call ends
/// with it). A call ending with it is not reported to the client's failure observers (the
/// connectivity monitor): the API did not fail, its token endpoint or the session did.
package enum AuthStepFailureKey: RequestContextKey {
    package typealias Value = Bool
}
