import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension CoreTests {
    /// `onStart` fires once per call, when its request really leaves for the network (the transport
    /// reports it, or a response proves it): never for a cache hit, never for the background
    /// revalidation of a stale-while-revalidate hit, never for an attempt that fails offline.
    @Suite struct OnStart {
        @Test func onStartRunsOnceWhenTheTransportIsReachedNotForACacheHit() async throws {
            let stub = StubTransport { _ in .status(200, body: "{}", headers: ["Cache-Control": "max-age=60"]) }
            let client = APIClient(environment: StandardClientFixture.environment) {
                $0.transport = stub
                $0.interceptors = .standard(cache: HTTPCache())
            }
            let started = Locked(0)
            let request = Request<Data>.get("/a").onStart { started.withLock { $0 += 1 } }
            _ = try await client.send(request)
            _ = try await client.send(request)
            #expect(started.current == 1)
        }

        /// `onStart` is documented "not for a cache hit". A stale-while-revalidate hit returns at
        /// once, then the background revalidation runs the rest of the pipeline with the caller's
        /// context, reaches the transport as that call's first attempt and fires `onStart` — a
        /// spinner shown after the screen already has its data, never hidden.
        @Test func onStartNotFiredByBackgroundRevalidation() async throws {
            let now = Locked(Date(timeIntervalSince1970: 1_800_000_000))
            var configuration = HTTPCache.Configuration()
            configuration.now = { now.current }
            let cache = HTTPCache(configuration: configuration)
            let fresh = HTTPResponse.status(
                200, body: #"{"id": 1, "name": "Lamp"}"#, contentType: "application/json",
                headers: ["Cache-Control": "max-age=1, stale-while-revalidate=600", "ETag": "\"v1\""])
            let stub = StubTransport(responses: [fresh, .status(304, headers: ["ETag": "\"v1\""])])
            let client = StandardClientFixture.client(stub, cache: cache)
            _ = try await client.send(Request<Item>.get("/items/1"))
            now.set(now.current.addingTimeInterval(10))

            let starts = Locked(0)
            let response = try await client.response(for: Request<Item>.get("/items/1").onStart { starts.withLock { $0 += 1 } })
            #expect(response.context.cacheOutcome == .staleServed(.whileRevalidating))
            await cache.waitForBackgroundRevalidations()
            #expect(stub.requestCount == 2)  // the revalidation did go out
            #expect(starts.current == 0)  // but the caller was told nothing started
        }

        @Test func onStartDoesNotRunWhenTheDeviceIsOfflineBeforeAnyConnection() async throws {
            let stub = StubTransport(responses: [.failure(URLError(.notConnectedToInternet))])
            let client = StandardClientFixture.client(stub)
            let started = Locked(0)
            let error = await StandardClientFixture.networkError {
                try await client.send(Request<Data>.get("/a").onStart { started.withLock { $0 += 1 } })
            }
            guard case .offline = error else {
                Issue.record("expected .offline, got \(String(describing: error))")
                return
            }
            #expect(stub.requestCount == 1)  // the transport was asked, and failed before sending
            #expect(started.current == 0)
        }

        @Test func onStartRunsOnceWhenARetryLeavesAfterAnAttemptThatCouldNotConnect() async throws {
            let stub = StubTransport(responses: [.failure(URLError(.cannotConnectToHost)), .success(.status(200, body: "{}"))])
            let client = StandardClientFixture.client(stub)
            let attemptsWhenStarted = Locked<[Int]>([])
            _ = try await client.send(
                Request<Data>.get("/a").onStart { attemptsWhenStarted.withLock { $0.append(stub.requestCount) } })
            #expect(stub.requestCount == 2)
            #expect(attemptsWhenStarted.current == [2])  // once, for the attempt that reached a server
        }

        @Test func aTransportReporterItsStartRunsTheHookBeforeItsResponseAndOnlyOnce() async throws {
            let order = Locked<[String]>([])
            let transport = StubTransport { _ in
                TransportReporter.current?.reportStart()
                TransportReporter.current?.reportStart()  // a second report (a redirect hop, a resend) is ignored
                order.withLock { $0.append("response") }
                return .status(200, body: "{}")
            }
            let client = StandardClientFixture.client(transport)
            _ = try await client.send(Request<Data>.get("/a").onStart { order.withLock { $0.append("start") } })
            #expect(order.current == ["start", "response"])
        }

        @Test func aRequestThatLeftAndThenFailedStillRanTheHook() async throws {
            let transport = StubTransport { _ in
                TransportReporter.current?.reportStart()
                throw URLError(.networkConnectionLost)
            }
            let client = StandardClientFixture.client(transport) { $0.interceptors = [] }
            let started = Locked(0)
            _ = await StandardClientFixture.networkError {
                try await client.send(Request<Data>.get("/a").onStart { started.withLock { $0 += 1 } })
            }
            #expect(started.current == 1)
        }

        @Test func noReporterIsBoundForACallWithoutAHook() async throws {
            let bound = Locked<Bool?>(nil)
            let transport = StubTransport { _ in
                bound.set(TransportReporter.current?.awaitsStart == true)
                return .status(200, body: "{}")
            }
            let client = StandardClientFixture.client(transport)
            _ = try await client.send(Request<Data>.get("/a"))
            #expect(bound.current == false)
        }
    }
}
