import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ServerSentEvents {
    /// Reads a feed: connects on the first `next()`, parses each connection's body, reconnects
    /// per the ``ReconnectPolicy``, and returns `nil` once the server answered 204.
    ///
    /// Everything happens inside `next()` on the consuming task: there is no background task, so
    /// cancelling the consumer (or dropping the iterator) ends the connection and the feed.
    public struct Iterator: AsyncIteratorProtocol {
        private let feed: ServerSentEvents
        private let lease: Lease?
        private var parser: ServerSentEventParser
        private var pending: [ServerSentEvent] = []
        private var nextPending = 0
        private var body: MessageBody.Iterator?
        private var head: HTTPResponse?
        private var uptime: (@Sendable () -> Duration)?
        private var attempt = 0
        private var finished = false

        init(feed: ServerSentEvents) {
            self.feed = feed
            let first = feed.status.iterated.withLock { iterated in
                defer { iterated = true }
                return !iterated
            }
            self.lease = first ? Lease(feed.status) : nil
            self.parser = ServerSentEventParser(
                lastEventID: feed.configuration.lastEventID, maximumEventSize: feed.configuration.maximumEventSize)
        }

        /// The next event, or `nil` once the server answered 204 (or the attempts ran out after a
        /// clean end, or the stream of a feed that does not reconnect ended).
        ///
        /// - Throws: `NetworkError`: the failure that ended the feed (see ``ServerSentEvents``),
        ///   `NetworkError.cancelled` when the consuming task was cancelled, and
        ///   `NetworkError.invalidRequest(_:)` for a second iteration of the same feed.
        public mutating func next() async throws -> ServerSentEvent? {
            guard lease != nil else {
                throw NetworkError.invalidRequest("a ServerSentEvents feed can be iterated once; call events(_:) again")
            }
            while !finished {
                if nextPending < pending.count {
                    defer { nextPending += 1 }
                    // The feed's last event ID is that of the last event handed out: an app that
                    // saves it to resume later misses none of the events parsed but not yet read.
                    feed.status.lastEventID.set(pending[nextPending].lastEventID)
                    return pending[nextPending]
                }
                do {
                    if body == nil {
                        try await open()
                    } else {
                        try await read()
                    }
                } catch {
                    close()
                    throw NetworkError(error)
                }
            }
            return nil
        }

        // MARK: One connection

        private mutating func open() async throws {
            feed.status.states.publish(.connecting)
            let response: StreamedResponse
            do {
                response = try await feed.connect(parser.lastEventID)
            } catch  where Self.isReconnectable(error) {
                try await reconnect(after: error)
                return
            }
            if response.statusCode == 204 {  // §9.2.3: "no more", do not reconnect
                close()
                return
            }
            // §9.2.3: only 200 opens a feed; any other status, 2xx included (205 has no body and
            // would reconnect at once, 206/299 are no event stream), fails it for good.
            guard response.statusCode == 200 else {
                throw await notAnEventStream(response, .unexpectedStatus(response.statusCode))
            }
            guard response.response.mediaType == "text/event-stream" else {
                throw await notAnEventStream(response, .unexpectedContentType(response.response.mediaType))
            }
            head = response.response
            body = response.body.makeAsyncIterator()
            uptime = stopwatch(feed.clock)
            feed.status.states.publish(.open)
        }

        private mutating func read() async throws {
            guard var iterator = body else { return }
            // An oversized event came after the events the last chunk delivered: it ends the
            // feed now, not when (if ever) more bytes arrive.
            if parser.hasDeferredFailure {
                do {
                    _ = try parser.parse(Data())
                } catch let error as ServerSentEventError {
                    throw decodingFailure(error, kind: .malformedBody, response: head ?? HTTPResponse(statusCode: 200))
                }
            }
            let chunk: Data?
            do {
                chunk = try await iterator.next()
            } catch  where Self.isReconnectable(error) {
                try await reconnect(after: error)
                return
            }
            body = iterator
            // Every event parsed so far was handed out: blocks without data (an `id` alone) move
            // the last event ID too.
            feed.status.lastEventID.set(parser.lastEventID)
            let events: [ServerSentEvent]
            do {
                guard let chunk else {  // a clean end: reconnect too (§9.2.3)
                    try await reconnect(after: nil)
                    return
                }
                events = try parser.parse(chunk)
            } catch let error as ServerSentEventError {
                throw decodingFailure(error, kind: .malformedBody, response: head ?? HTTPResponse(statusCode: 200))
            }
            if events.isEmpty { feed.status.lastEventID.set(parser.lastEventID) }
            pending = events
            nextPending = 0
        }

        /// Ends the connection, waits per the policy and lets the loop reconnect; throws `error`
        /// (or ends the feed after a clean end) when the attempts ran out.
        private mutating func reconnect(after error: (any Error)?) async throws {
            // A body ends early when its consumer is cancelled: that is no reason to reconnect.
            if Task.isCancelled { throw NetworkError.cancelled }
            body = nil
            head = nil
            parser.finish()
            feed.status.lastEventID.set(parser.lastEventID)
            // Connecting again sends the request again: a request that may not be repeated (a
            // `POST` without an idempotency key) has had its one answer, whole or broken off.
            guard feed.reconnects else {
                if let error { throw error }
                close()
                return
            }
            let policy = feed.configuration.reconnect
            if let uptime, uptime() >= policy.stableThreshold { attempt = 0 }
            uptime = nil
            // A buffer overflow is the consumer falling behind a connection that worked (its
            // events were handed out): no failure of the server, so neither backoff nor an attempt
            // towards `maximumAttempts`; the reconnect waits the server's reconnection time.
            var consumerFellBehind = false
            if let error, case .streamBufferOverflow = NetworkError(error) { consumerFellBehind = true }
            if !consumerFellBehind { attempt += 1 }
            if let maximum = policy.maximumAttempts, attempt > maximum {
                if let error { throw error }
                close()
                return
            }
            var delay = policy.delay(
                forAttempt: Swift.max(1, attempt), serverRetry: parser.reconnectionTime, random: feed.random())
            if let error, case .backendUnavailable(_, let retryAfter) = NetworkError(error) {
                // The host asked every call to wait (or its breaker is open): not sooner.
                delay = Swift.max(delay, retryAfter)
            }
            feed.status.states.publish(.reconnecting(attempt: Swift.max(1, attempt), delay: delay))
            try await feed.clock.sleep(for: delay)
        }

        private mutating func close() {
            finished = true
            body = nil
            head = nil
            feed.status.states.publish(.closed)
        }

        // MARK: Errors

        /// Network failures and timeouts reconnect; statuses, media types, auth and cancellation do
        /// not, nor does a transport failure that the next connection would meet again (a redirect
        /// loop, a reply that is not HTTP, a refused certificate: `repeatsWhenSentAgain`), which
        /// ends the feed with its error (WHATWG HTML §9.2.3: reestablishing is futile). A consumer that fell more than the buffer bound behind a transport that cannot pause
        /// (URLSession on Linux) reconnects too: `Last-Event-ID` resumes after the last event it got.
        /// So does a compressed stream cut before the end of its coding (`undecodableResponse`
        /// with `corruptContent` that ended early), as an uncompressed one that ends does; a
        /// coding that does not decode ends the feed. So does a host the client holds back (``Courier/NetworkError/backendUnavailable(host:retryAfter:)``:
        /// its circuit breaker is open after failed connects, or it asked for a pause), after the
        /// wait it names: an outage ends the feed no sooner than ``ReconnectPolicy/maximumAttempts``.
        /// A token store that cannot be read at the moment (a Keychain while the device is locked)
        /// reconnects as well; a corrupted one ends the feed.
        private static func isReconnectable(_ error: any Error) -> Bool {
            guard error is NetworkError || error is URLError || error is TokenStoreError else { return false }
            switch NetworkError(error) {
            case .offline, .timedOut, .streamBufferOverflow, .backendUnavailable: return true
            case .transport(let failure): return !failure.code.repeatsWhenSentAgain
            // A compressed stream whose bytes ended before its coding did was cut, as an
            // uncompressed one that ends is (CurlTransport inflates it and sees the cut).
            case .undecodableResponse(let failure): return failure.endedEarly
            // A token store that cannot be read now (a Keychain while the device is locked) may
            // be readable after the backoff; one holding something else reads the same each time.
            case .tokenStoreFailed(let failure):
                if case .corrupted = failure { return false }
                return true
            default: return false
            }
        }

        /// The failure for a response that does not open a feed, with (at most) its body's first
        /// KiB for the error snippet. A body that fails to arrive leaves the snippet empty (the
        /// response is refused anyway); a consumer cancelled while it waits gets
        /// ``NetworkError/cancelled``, as anywhere else.
        private func notAnEventStream(_ response: StreamedResponse, _ error: ServerSentEventError) async -> NetworkError {
            var iterator = response.body.makeAsyncIterator()
            var sent = response.response
            do {
                sent.data = try await iterator.next().map { Data($0.prefix(1024)) } ?? Data()
            } catch {
                sent.data = Data()
            }
            if Task.isCancelled { return .cancelled }
            return decodingFailure(error, kind: .unexpectedContentType, response: sent)
        }

        private func decodingFailure(
            _ error: ServerSentEventError, kind: DecodingFailure.Kind, response: HTTPResponse
        ) -> NetworkError {
            var failure = DecodingFailure(
                underlying: error, codingPath: "<root>", typeName: "ServerSentEvent", response: response,
                redactor: feed.redactor)
            failure.kind = kind
            return .decoding(failure)
        }
    }

    /// Closes the feed (state ``ConnectionState/closed``) when the last copy of its iterator goes
    /// away, however the consumer stopped.
    final class Lease: Sendable {
        private let status: FeedStatus

        init(_ status: FeedStatus) { self.status = status }

        deinit { status.states.publish(.closed) }
    }
}

/// A closure that returns the time elapsed on `clock` since it was made.
private func stopwatch<C: Clock>(_ clock: C) -> @Sendable () -> Duration where C.Duration == Duration {
    let start = clock.now
    return { start.duration(to: clock.now) }
}
