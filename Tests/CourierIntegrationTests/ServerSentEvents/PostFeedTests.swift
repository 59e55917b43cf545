import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

/// Feeds asked with `POST` (an API that streams its answer to a write, `POST /sse/{feed}`): a
/// reconnection sends the request again, which a feed may do only when that is safe (RFC 9110
/// §9.2.2) — an idempotent method, or one idempotency key for every connection.
extension ServerSentEventsIntegrationTests {
    struct Prompt: Encodable, Sendable {
        var text = "pay 10 EUR to Bob"
    }

    struct PostRecord: Decodable {
        var connections: Int
        var methods: [String]
        var bodies: [Int]
        var lastEventIds: [String?]
    }

    static func postRecord(_ feed: String, namespace: String) async throws -> PostRecord {
        let (_, data) = try await TestServers.control("GET", "_sse/\(feed)", namespace: namespace)
        return try JSONDecoder().decode(PostRecord.self, from: data)
    }

    /// The server got the feed's `POST` once.
    static func expectPostedOnce(
        _ feed: String, namespace: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let record = try await postRecord(feed, namespace: namespace)
        #expect(
            record.methods == ["POST"],
            "the POST was sent again: \(record.methods), bodies \(record.bodies), Last-Event-ID \(record.lastEventIds)",
            sourceLocation: sourceLocation)
    }

    static func postFeed(_ name: String, _ query: [String: String], policy: EndpointPolicy = .standard) -> Request<Void> {
        Request<Void>.post(
            "/sse/\(name)", body: Prompt(),
            query: Query(query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }),
            policy: policy)
    }

    /// A `POST` feed whose connection drops after 2 events ends with the network error: the
    /// server got the `POST` once. It used to reconnect and send the `POST` again (2 arrivals,
    /// both with the body), which a server applies twice.
    @Test func aPostFeedThatDropsIsNotSentAgain() async throws {
        let namespace = TestServers.makeNamespace("sse")
        let clock = TestClock(mode: .manual)
        let client = try Self.client(namespace: namespace, clock: clock)
        let feed = client.events(
            Self.postFeed("answer", ["count": "6", "dropAfter": "2", "retry": "100"]), configuration: Self.noJitter)
        let states = Self.drive(feed, clock: clock)
        var events: [ServerSentEvent] = []
        var failure: (any Error)?
        do {
            for try await event in feed {
                events.append(event)
                if events.count > 20 { break }
            }
        } catch {
            failure = error
        }
        _ = await states.value
        #expect(events.map(\.lastEventID) == ["1", "2"])
        #expect(
            (failure as? NetworkError)?.kind == .transport || (failure as? NetworkError)?.kind == .timedOut,
            "\(String(describing: failure))")
        try await Self.expectPostedOnce("answer", namespace: namespace)
        #expect(feed.state == .closed)
    }

    /// A `POST` feed whose stream ends cleanly ends there (the answer is complete): the server got
    /// the `POST` once. It used to reconnect and send it again after the end.
    @Test func aPostFeedEndsWithItsStream() async throws {
        let namespace = TestServers.makeNamespace("sse")
        let clock = TestClock(mode: .manual)
        let client = try Self.client(namespace: namespace, clock: clock)
        let feed = client.events(Self.postFeed("done", ["count": "3", "retry": "100"]), configuration: Self.noJitter)
        let states = Self.drive(feed, clock: clock)
        var events: [ServerSentEvent] = []
        for try await event in feed {
            events.append(event)
            if events.count > 20 { break }
        }
        _ = await states.value
        #expect(events.map(\.lastEventID) == ["1", "2", "3"])
        try await Self.expectPostedOnce("done", namespace: namespace)
        #expect(feed.state == .closed)
    }

    /// A `POST` feed with an idempotency key reconnects, and every connection carries the same
    /// key, so the server can tell the repetition (`.automatic` makes one key for the feed, not
    /// one per connection).
    @Test func aKeyedPostFeedReconnectsUnderOneKey() async throws {
        let namespace = TestServers.makeNamespace("sse")
        let clock = TestClock(mode: .manual)
        let client = try Self.client(namespace: namespace, clock: clock)
        let feed = client.events(
            Self.postFeed(
                "keyed", ["count": "4", "dropAfter": "2", "retry": "100"], policy: .standard.with(\.idempotency, .automatic)),
            configuration: Self.noJitter)
        let states = Self.drive(feed, clock: clock)
        var events: [ServerSentEvent] = []
        for try await event in feed {
            events.append(event)
            if events.count > 20 { break }
        }
        _ = await states.value
        #expect(events.map(\.lastEventID) == ["1", "2", "3", "4"])
        let sent = try await TestServers.requestLog(namespace: namespace, path: "/sse/keyed")
        let keys = sent.map { $0.header("Idempotency-Key") }
        #expect(sent.count >= 2)
        #expect(keys.allSatisfy { $0 != nil } && Set(keys).count == 1, "\(keys)")
    }
}
