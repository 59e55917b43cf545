import Courier
import Foundation

extension APIClient {
    /// A Server-Sent Events feed from `endpoint` that reconnects by itself (see
    /// ``ServerSentEvents``). Nothing is sent until the feed is iterated.
    ///
    /// ```swift
    /// for try await event in client.events(Request<Void>.get("/orders/live")) {
    ///     print(event.type, event.data, event.lastEventID)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - endpoint: The feed's endpoint: its path, query, headers and policy apply to every
    ///     connection (`Response` and decoding are not used). Usually a GET. Reconnecting sends
    ///     the request again, so a feed whose request may not be repeated (RFC 9110 §9.2.2: a
    ///     `POST` or `PATCH` without an idempotency key) never reconnects: it ends with its
    ///     stream, or with the error that broke it. With `IdempotencyPolicy.automatic` every
    ///     connection carries the same key.
    ///   - configuration: Reconnect policy, the ID to resume after, the event size bound and
    ///     each connection's streaming options.
    /// - Returns: The feed; iterate it once. Backoff waits use the client's
    ///   `APIClient.Configuration.clock`.
    public func events<E: Endpoint>(
        _ endpoint: E, configuration: ServerSentEvents.Configuration = ServerSentEvents.Configuration()
    ) -> ServerSentEvents {
        // A consumer behind a transport that cannot pause reads the events that arrived before
        // the overflow, and the reconnect resumes after them: it progresses a buffer per connection.
        // An open feed holds its connection: it goes outside the pool of the client's other calls.
        let options = {
            var options = configuration.streaming
            options.deliversBufferedBeforeOverflow = true
            options.isLongLived = true
            return options
        }()
        // The environment of the first connection: a reconnection after a switch would read
        // another server's feed, carrying this one's `Last-Event-ID`; it ends the feed instead.
        let firstEnvironment = Locked<String?>(nil)
        // The sign-in whose token the first authorized connection carried: a reconnection after a
        // sign-out and another sign-in would read the next user's feed into this one, carrying
        // this user's `Last-Event-ID`; it ends the feed (``NetworkError/signedOut``) instead.
        let firstSignIn = Locked<Int?>(nil)
        // Each connection is a call of its own: one key for all of them, so a server that honours
        // it sees one operation (`.automatic` would make a new key per connection).
        let idempotency: IdempotencyPolicy =
            switch endpoint.policy.idempotency {
            case .automatic: .key(UUID().uuidString)
            case let other: other
            }
        // A reconnection sends the request again: only one a client may repeat (RFC 9110 §9.2.2).
        let hasKey =
            idempotency != .none || endpoint.headers["Idempotency-Key"].map { $0.contains { $0 != " " && $0 != "\t" } } == true
        let repeatable = endpoint.policy.retry.allowsRetry(method: endpoint.method, hasIdempotencyKey: hasKey)
        return ServerSentEvents(
            configuration: configuration, clock: self.configuration.clock, redactor: laneRedactor, reconnects: repeatable
        ) { [self] lastEventID in
            let required = firstEnvironment.withLock { pinned in
                let id = pinned ?? environment.id
                pinned = id
                return id
            }
            let signIn = firstSignIn.current.map { SignInRequirement(session: $0) }
            let response = try await stream(
                EventStreamEndpoint(base: endpoint, lastEventID: lastEventID, idempotency: idempotency), options: options,
                requiredEnvironment: required,
                requiredSignIn: signIn)
            if let session = response.context[SignInSessionKey.self] {
                firstSignIn.withLock { pinned in pinned = pinned ?? session }
            }
            return response
        }
    }
}
