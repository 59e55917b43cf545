import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

extension ServerSentEventsTests {
    /// A transport that answers each connection of a feed from a script: a head and body chunks
    /// that end cleanly, fail, or never end; or an error before the head. Once the script is
    /// spent every connection gets 204.
    final class ScriptedTransport: Transport {
        enum Ending: Sendable {
            case end
            case fail(any Error)
            /// The body stays open (until the consuming task is cancelled).
            case hang
        }

        enum Connection: Sendable {
            case stream(status: Int = 200, contentType: String = "text/event-stream", chunks: [String], then: Ending = .end)
            case failure(URLError)
        }

        private let script: Locked<[Connection]>
        private let recorded = Locked<[URLRequest]>([])
        private let hanging = Locked<[AsyncStream<Void>.Continuation]>([])
        /// Runs when a connection's body is about to end (before `then`): a test moves its clock here.
        let beforeEnd: @Sendable (_ connection: Int) -> Void

        init(_ script: [Connection], beforeEnd: @escaping @Sendable (Int) -> Void = { _ in }) {
            self.script = Locked(script)
            self.beforeEnd = beforeEnd
        }

        var requests: [URLRequest] { recorded.current }
        func header(_ name: String, ofConnection index: Int) -> String? {
            let requests = recorded.current
            return index < requests.count ? requests[index].value(forHTTPHeaderField: name) : nil
        }

        func send(_ request: URLRequest) async throws -> HTTPResponse {
            Issue.record("a feed must stream, not send")
            return HTTPResponse(statusCode: 500)
        }

        func stream(_ request: URLRequest, options: StreamingOptions) async throws -> HTTPResponse {
            let number = recorded.withLock { requests in
                requests.append(request)
                return requests.count - 1
            }
            let next = script.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            guard let next else { return HTTPResponse(statusCode: 204) }
            switch next {
            case .failure(let error):
                throw error
            case .stream(let status, let contentType, let chunks, let ending):
                let beforeEnd = self.beforeEnd
                let hanging = self.hanging
                let position = Locked(0)
                // Unfolded lazily: each chunk (and the end) happens when the feed asks for it.
                let body = AsyncThrowingStream<Data, any Error> {
                    let index = position.withLock { index in
                        defer { index += 1 }
                        return index
                    }
                    if index < chunks.count { return Data(chunks[index].utf8) }
                    guard index == chunks.count else { return nil }
                    beforeEnd(number)
                    switch ending {
                    case .end: return nil
                    case .fail(let error): throw error
                    case .hang:
                        // Suspends until the consuming task is cancelled (no sleep).
                        let (never, continuation) = AsyncStream.makeStream(of: Void.self)
                        hanging.withLock { $0.append(continuation) }
                        for await _ in never {}
                        throw CancellationError()
                    }
                }
                // Marked cacheable on purpose: a feed must bypass the HTTP cache all the same.
                var response = HTTPResponse(
                    statusCode: status, headers: ["Content-Type": contentType, "Cache-Control": "max-age=600"], url: request.url)
                response.body = MessageBody(body)
                return response
            }
        }
    }

    static let environment = APIEnvironment(name: "unit", baseURL: URL(string: "https://api.example.test/v1")!)

    /// A client on `transport` without retries (each connection is one request), on `clock`.
    static func client(_ transport: ScriptedTransport, clock: TestClock, interceptors: [any Interceptor] = []) -> APIClient {
        APIClient(environment: environment) {
            $0.transport = transport
            $0.interceptors = interceptors
            $0.clock = clock
        }
    }

    /// Every event of `feed` until it ends, and the error that ended it (nil for a normal end).
    static func drain(_ feed: ServerSentEvents) async -> (events: [ServerSentEvent], error: NetworkError?) {
        var events: [ServerSentEvent] = []
        do {
            for try await event in feed {
                events.append(event)
                if events.count > 1000 { break }  // bounded, whatever the script
            }
            return (events, nil)
        } catch let error as NetworkError {
            return (events, error)
        } catch {
            Issue.record("a feed threw \(type(of: error)): \(error)")
            return (events, nil)
        }
    }

    /// Records every state `feed` publishes until it closes, and plays the user of a manual
    /// `clock`: each time the feed waits to reconnect, the clock moves by exactly that delay once
    /// the feed sleeps (the client's deadlines sleep on the same clock, so it cannot advance by itself).
    static func drive(_ feed: ServerSentEvents, clock: TestClock) -> Task<[ServerSentEvents.ConnectionState], Never> {
        let states = feed.states()
        return Task {
            var seen: [ServerSentEvents.ConnectionState] = []
            for await state in states {
                seen.append(state)
                if case .reconnecting(_, let delay) = state {
                    // The reconnect sleep itself, begun now: the client's deadline timer keeps
                    // sleeping towards the deadline of a call that ended, which can be the very
                    // instant the reconnect ends (a feed connected at 0 s that reconnects at 57 s
                    // for 3 s, a 60 s deadline). Taken for the reconnect's sleep, it made this
                    // advance come first: the feed then slept until 63 s and hung (1 run in 10).
                    try? await clock.waitForSleeper(for: delay)
                    clock.advance(by: delay)
                }
            }
            return seen
        }
    }

    /// The reconnect delays among `states`, in order.
    static func delays(_ states: [ServerSentEvents.ConnectionState]) -> [Duration] {
        states.compactMap {
            if case .reconnecting(_, let delay) = $0 { return delay }
            return nil
        }
    }
}
