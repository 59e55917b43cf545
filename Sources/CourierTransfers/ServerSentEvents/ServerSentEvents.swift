import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A live Server-Sent Events feed (WHATWG HTML §9.2) as an `AsyncSequence` of
/// ``ServerSentEvent``s that reconnects by itself: what a browser's `EventSource` does, through the
/// client's whole pipeline. Made by ``Courier/APIClient/events(_:configuration:)``.
///
/// ```swift
/// let feed = client.events(Request<Void>.get("/prices", policy: .authorizedRead))
/// Task { for await state in feed.states() { banner.show(state) } }   // "reconnecting in 3.00 s (attempt 1)"
/// for try await event in feed where event.type == "price" {
///     try show(client.configuration.decoder.decode(Price.self, from: Data(event.data.utf8)))
/// }
/// ```
///
/// - Each connection is one call of `APIClient.stream(_:options:)`: request ID, auth (a 401
///   refreshes the token once and resends), retries before the head, logging and metrics apply
///   to every reconnect. It sends `Accept: text/event-stream` and, once an event carried an `id`,
///   `Last-Event-ID` (§9.2.4) so the server can resume after it.
/// - A network error (`NetworkError.offline(_:)`, `NetworkError.timedOut(_:)` — also the idle
///   timeout between chunks — or `NetworkError.transport(_:)`) or a clean end of the stream
///   reconnects after the server's `retry` (else a default) with backoff and jitter (``ReconnectPolicy``).
///   A reconnection sends the request again: a feed whose request may not be repeated (RFC 9110
///   §9.2.2: a `POST` or `PATCH` without an idempotency key, an API that streams its answer to a
///   write) never reconnects — it ends with its stream, or throws the error that broke it.
/// - A 204 ends the sequence (the server says "no more"); any other failure ends it with a
///   `NetworkError` and no reconnect: a status the endpoint does not accept (its case, such as
///   `NetworkError.unauthorized(_:)`), an accepted status other than 200 (a 205, 206 or 299:
///   ``ServerSentEventError/unexpectedStatus(_:)``) or a response that is not `text/event-stream`
///   (both `NetworkError.decoding(_:)` of kind `DecodingFailure.Kind.unexpectedContentType`;
///   the second is a captive portal's page), an event beyond `APIClient.Configuration.maximumEventSize` (kind
///   `DecodingFailure.Kind.malformedBody`), signed out, session expired. A reconnection never
///   goes out under another sign-in than the first connection's (a sign-out and another sign-in
///   while the feed waited): the feed ends with `NetworkError.signedOut`, nothing sent.
/// - Cancelling the consuming task (or stopping the iteration) closes the connection at once;
///   a cancelled iteration throws `NetworkError.cancelled`.
///
/// A feed is iterated once: a second iterator throws `NetworkError.invalidRequest(_:)`. Make a
/// new one with ``Courier/APIClient/events(_:configuration:)`` to start over (pass ``lastEventID`` in the
/// configuration to resume).
public final class ServerSentEvents: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent

    /// How a feed connects, reconnects and bounds its events.
    public struct Configuration: Sendable {
        /// When to reconnect; ``ReconnectPolicy/standard`` by default.
        public var reconnect: ReconnectPolicy
        /// The last event ID to resume after on the first connection (one the app saved from an
        /// earlier feed); `""` (the default) sends no `Last-Event-ID` until an event carries an `id`.
        public var lastEventID: String
        /// The most bytes one event may hold while it arrives; 1 MiB by default.
        public var maximumEventSize: Int
        /// Buffer bound and idle timeout of each connection's body. The buffer (4 MiB by default,
        /// more than ``maximumEventSize``, so an oversized event is reported as one) holds what a slow
        /// consumer has not read yet; a consumer further behind a transport that cannot pause
        /// reconnects with `Last-Event-ID`. The idle timeout (60 s by default) should exceed the
        /// server's keep-alive comment interval: a silent connection is taken for dead and reconnected.
        public var streaming: StreamingOptions

        /// Creates a configuration.
        /// - Parameters:
        ///   - reconnect: When to reconnect.
        ///   - lastEventID: The ID to resume after; `""` for none.
        ///   - maximumEventSize: The most bytes per event (at least 1).
        ///   - streaming: Buffer bound and idle timeout per connection.
        public init(
            reconnect: ReconnectPolicy = .standard, lastEventID: String = "", maximumEventSize: Int = 1 << 20,
            streaming: StreamingOptions = StreamingOptions(bufferLimit: 4 << 20)
        ) {
            self.reconnect = reconnect
            self.lastEventID = lastEventID
            self.maximumEventSize = Swift.max(1, maximumEventSize)
            self.streaming = streaming
        }
    }

    /// Opens one connection: the client's stream call with `Last-Event-ID` (when not empty).
    typealias Connect = @Sendable (_ lastEventID: String) async throws -> StreamedResponse

    let configuration: Configuration
    let connect: Connect
    let clock: any Clock<Duration>
    let random: @Sendable () -> Double
    let redactor: Redactor
    /// Whether the feed may connect again, which sends its request again: `false` for a request
    /// that may not be repeated (a `POST` without an idempotency key), whose feed ends instead.
    let reconnects: Bool
    let status = FeedStatus()

    init(
        configuration: Configuration, clock: any Clock<Duration>, redactor: Redactor, reconnects: Bool = true,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }, connect: @escaping Connect
    ) {
        self.configuration = configuration
        self.clock = clock
        self.redactor = redactor
        self.reconnects = reconnects
        self.random = random
        self.connect = connect
        status.lastEventID.set(configuration.lastEventID)
    }

    /// The connection's current state.
    public var state: ConnectionState { status.states.latest }

    /// The last event ID so far (what the next reconnect sends as `Last-Event-ID`); save it to
    /// resume a later feed with `APIClient.Configuration.lastEventID`.
    public var lastEventID: String { status.lastEventID.current }

    /// Every state change from now on, starting with the current state; the stream finishes after
    /// ``ConnectionState/closed``. Any number of observers; none is needed.
    public func states() -> AsyncStream<ConnectionState> { status.states.stream() }

    /// Starts the feed: the first `next()` connects.
    public func makeAsyncIterator() -> Iterator { Iterator(feed: self) }
}

/// What a feed shares between its iterator and its observers.
final class FeedStatus: Sendable {
    let states = StateBroadcast<ServerSentEvents.ConnectionState>(initial: .connecting, isFinal: { $0 == .closed })
    let lastEventID = Locked("")
    let iterated = Locked(false)
}
