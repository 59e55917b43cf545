import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One connection of a feed: the app's endpoint with `Accept: text/event-stream` (unless it sets
/// its own), `Last-Event-ID` when the feed has one (WHATWG HTML §9.2.4), and the HTTP cache
/// bypassed: an event stream is never answered from nor stored in a cache (§9.2.2 fetches it
/// with cache mode "no-store"), or a reconnect could replay old events. Nor is a connection retried
/// by the pipeline: the feed's ``ServerSentEvents/ReconnectPolicy`` alone decides when to connect
/// again (retries inside each reconnect would multiply the attempts a failing server sees).
struct EventStreamEndpoint<Base: Endpoint>: WrappedEndpoint {
    typealias Response = Base.Response

    let base: Base
    let lastEventID: String
    /// The feed's one idempotency policy for every connection (`.automatic` made a key once).
    let idempotency: IdempotencyPolicy

    var headers: HTTPHeaders {
        var headers = base.headers
        if !headers.contains("Accept") { headers.replace("Accept", with: "text/event-stream") }
        if lastEventID.isEmpty {
            headers.remove("Last-Event-ID")
        } else {
            headers.replace("Last-Event-ID", with: lastEventID)
        }
        return headers
    }
    var policy: EndpointPolicy {
        base.policy.with(\.cache, .bypassCache).with(\.retry, .none).with(\.idempotency, idempotency)
    }
}
