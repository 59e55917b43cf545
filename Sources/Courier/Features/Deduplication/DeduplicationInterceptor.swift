import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Makes concurrent identical GET and HEAD requests share one network call: the first one is
/// sent, the others wait for its response, and every caller gets it. A call that its API declares
/// safe although its method is not (a GraphQL query sent as `POST`) is shared the same way, its
/// body bytes being part of what must be identical.
///
/// Requests are identical when the method, the URL, every header field (except per-call ones
/// such as `X-Request-ID`, see ``defaultIgnoredHeaders``), the body, the account partition and
/// the transport's idle timeout (from the endpoint's deadline) are equal — so variants
/// negotiated by headers, and different accounts, are never mixed, and a call with a longer
/// deadline is never carried by a request the transport gives up on at a shorter one's.
///
/// Cancelling one caller does not cancel the shared request while other callers still wait; when
/// the last one leaves, the shared request is cancelled. The shared request runs the rest of the
/// pipeline with the context of the caller that started it (retries, auth), so only that context
/// counts attempts; each caller's context records its ``DeduplicationRole``.
///
/// Place it right inside the ``CacheInterceptor`` (``HTTPCache/interceptors()`` does), so that
/// concurrent misses and revalidations of one resource reach the server once.
package struct DeduplicationInterceptor: Interceptor {
    /// Header fields that differ per call without changing the response, lower-cased:
    /// `x-request-id`, `x-correlation-id`, `traceparent`, `tracestate`, `idempotency-key`.
    package static let defaultIgnoredHeaders: Set<String> = [
        "x-request-id", "x-correlation-id", "traceparent", "tracestate", "idempotency-key",
    ]

    /// The account of the current request, part of the identity of a request.
    package let partition: @Sendable () -> String
    /// Header fields (lower-cased) left out when comparing requests.
    package let ignoredHeaders: Set<String>
    private let flights = InFlightRequests()
    /// Bumped by ``resetSession()``: requests in flight before it are never joined after it.
    private let session = Locked(0)
    /// The token managers of the client whose pipeline holds this interceptor (its lane's): the
    /// sign-in each one is in is part of an authorized request's identity, so a call made after
    /// another sign-in (`TokenManager.signIn(_:)` directly, a sign-out, an expiry) never joins
    /// a request of the previous account still in flight.
    private let signIns = Locked<[TokenManager]?>(nil)

    /// Creates the interceptor.
    /// - Parameters:
    ///   - partition: The account of the current request; `"shared"` by default.
    ///   - ignoredHeaders: Fields (any case) left out when comparing requests.
    package init(
        partition: @escaping @Sendable () -> String = { "shared" },
        ignoredHeaders: Set<String> = DeduplicationInterceptor.defaultIgnoredHeaders
    ) {
        self.partition = partition
        self.ignoredHeaders = Set(ignoredHeaders.map { $0.lowercased() })
    }

    /// Number of distinct requests in flight now (for tests and diagnostics).
    package var inFlightCount: Int { flights.count }

    /// Number of calls waiting for a request in flight, their own included.
    package var waitingCount: Int { flights.waiterCount }

    package func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        // A stream has one consumer; it cannot be shared with another call.
        if context.streaming != nil { return try await next(request) }
        let method = (request.httpMethod ?? "GET").uppercased()
        let shareable =
            context.redirectMode.followsAll && request.httpBodyStream == nil
            && ((method == "GET" || method == "HEAD") ? request.httpBody == nil : context.isDeclaredSafe)
        guard shareable, var key = key(for: request, method: method, auth: context.policy.auth) else {
            return try await next(request)
        }
        if context.policy.auth != .none, let managers = signIns.current {
            for manager in managers { key.signIns.append(manager.currentSession) }
        }
        key.cacheGeneration = context[CacheGenerationKey.self]
        let delivery = try await flights.response(for: key) { try await next(request) }
        context[DeduplicationRoleKey.self] = delivery.role
        return delivery.response
    }

    /// The identity of a request for sharing. It runs before the auth interceptor adds the token,
    /// so the endpoint's auth requirement is part of it: an authorized call never joins an
    /// anonymous one (or the reverse).
    private func key(for request: URLRequest, method: String, auth: AuthRequirement) -> InFlightRequests.Key? {
        guard let url = request.url else { return nil }
        let headers =
            (request.allHTTPHeaderFields ?? [:])
            .map { (name: $0.key.lowercased(), value: $0.value) }
            .filter { !ignoredHeaders.contains($0.name) }
            .sorted { $0.name < $1.name }
            .map { "\($0.name):\($0.value)" } + ["courier-auth:\(auth)", "courier-timeout:\(request.timeoutInterval)"]
        return InFlightRequests.Key(
            partition: partition(), session: session.current, method: method, url: url.absoluteString, headers: headers,
            body: request.httpBody)
    }
}

extension DeduplicationInterceptor: LaneParticipant {
    /// Takes the token managers of the first client whose pipeline holds this interceptor.
    package func adoptLaneTokenManagers(_ managers: [TokenManager]) {
        signIns.withLock { current in
            if current == nil { current = managers }
        }
    }
}

extension DeduplicationInterceptor: SessionResettable {
    /// Detaches the requests in flight from callers to come: those already waiting still get
    /// their answer, but a call made after the reset (the next account's `GET /me`, which the
    /// partition may not tell apart) sends its own request instead of joining the previous
    /// account's.
    package func resetSession() async throws {
        session.withLock { $0 += 1 }
    }

    /// ``SessionResetStage/signOut``: before anything else, so no call of the next session joins.
    package var sessionResetStage: SessionResetStage { .signOut }
}

/// How a call took part in request de-duplication.
package enum DeduplicationRole: Sendable, Hashable {
    /// The call's own request went to the network — or it took over a shared request whose
    /// starter left. It is the one that stores the response in the cache.
    case primary
    /// The call joined an identical request already in flight and received its response.
    case joined
}

/// The ``RequestContext`` slot holding the call's ``DeduplicationRole``; empty when the call was
/// not eligible (not GET/HEAD, or a body, and not declared safe).
package enum DeduplicationRoleKey: RequestContextKey {
    /// The stored type.
    package typealias Value = DeduplicationRole
}
