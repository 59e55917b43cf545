import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension RetryIntegrationTests {
    /// `POST /orders` when the server stores the order and then drops the connection.
    @Suite(.timeLimit(.minutes(2))) struct IdempotentOrderTests {
        struct NewOrder: Encodable, Sendable {
            var sku = "lamp-42"
            var quantity = 1
        }

        struct Order: Decodable, Sendable {
            var id: Int
            var idempotencyKey: String?
        }

        static func createOrder(_ idempotency: IdempotencyPolicy) -> Request<Order> {
            Request<Order>.post("/orders", body: NewOrder())
                .policy(EndpointPolicy.standard.with(\.retry, .default).with(\.idempotency, idempotency))
        }

        /// Without a key the POST is not retried: one order on the server, a transport error for
        /// the caller (who can check the order list before trying again).
        @Test func postWithoutKeyIsNotRetriedAfterTheConnectionDrops() async throws {
            let clock = TestClock()
            let session = try RetrySession.start(clock: clock)
            try await session.inject("POST", "/orders", [["action": "drop_after_store"]])
            do {
                _ = try await session.client.send(Self.createOrder(.none))
                Issue.record("expected a transport error")
            } catch NetworkError.transport(let urlError) {
                #expect(RetryPolicy.default.isRetryable(urlError))  // retryable in kind — but not for a keyless POST
                // An empty reply is a lost connection, as on Apple platforms and over CurlTransport.
                #expect(urlError.code == .networkConnectionLost, "\(urlError.code.rawValue): \(urlError.localizedDescription)")
            }
            let stats = try await session.stats()
            #expect(stats.ordersCreated == 1)
            #expect(stats.requests("POST /orders") == 1)
            #expect(clock.sleeps.isEmpty)
            #expect(try await session.idempotencyKeysSent(path: "/orders") == [nil])
        }

        @Test(arguments: [IdempotencyPolicy.automatic, .key("order-\(UUID().uuidString.prefix(8))")])
        func keyedPostIsRetriedWithTheSameKeyAndCreatesOneOrder(_ idempotency: IdempotencyPolicy) async throws {
            let clock = TestClock()
            let session = try RetrySession.start(clock: clock)
            try await session.inject("POST", "/orders", [["action": "drop_after_store"]])
            let response = try await session.client.response(for: Self.createOrder(idempotency))
            let key = try #require(response.context.idempotencyKey)
            if case .key(let chosen) = idempotency { #expect(key == chosen) }

            #expect(response.statusCode == 201)
            #expect(response.response.headers["Idempotent-Replayed"] == "true")  // the stored outcome, replayed
            #expect(response.value.id == 1)
            #expect(response.value.idempotencyKey == key)
            #expect(response.context.attempt == 2)
            #expect(clock.sleeps.count == 1)

            let stats = try await session.stats()
            #expect(stats.ordersCreated == 1)
            #expect(stats.ordersCreated(key: key) == 1)
            #expect(stats.requests("POST /orders") == 2)
            #expect(stats.replays == 1)
            #expect(try await session.idempotencyKeysSent(path: "/orders") == [key, key])
        }
    }
}
