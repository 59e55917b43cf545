import Courier

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
    ///     connection (`Response` and decoding are not used). Usually a GET.
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
        return ServerSentEvents(
            configuration: configuration, clock: self.configuration.clock, redactor: laneRedactor
        ) { [self] lastEventID in
            let required = firstEnvironment.withLock { pinned in
                let id = pinned ?? environment.id
                pinned = id
                return id
            }
            let signIn = firstSignIn.current.map { SignInRequirement(session: $0) }
            let response = try await stream(
                EventStreamEndpoint(base: endpoint, lastEventID: lastEventID), options: options, requiredEnvironment: required,
                requiredSignIn: signIn)
            if let session = response.context[SignInSessionKey.self] {
                firstSignIn.withLock { pinned in pinned = pinned ?? session }
            }
            return response
        }
    }
}
