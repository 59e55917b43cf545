import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// SampleTransport answers from the samples endpoints declare, with behaviours.
    @Suite struct SampleResponses {
        struct Item: Codable, Equatable, Sendable {
            var id: Int
            var name: String
        }

        struct GetItem: SampleResponseProviding {
            typealias Response = Item
            let id: Int
            var path: String { "/items/\(id)" }
            var pathTemplate: String? { "/items/{id}" }
            var sampleResponses: [SampleResponse] {
                [.json(#"{"id": 42, "name": "Lamp"}"#), .status(404, name: "missing")]
            }
        }

        struct ListItems: SampleResponseProviding {
            typealias Response = [Item]
            var path: String { "/items" }
            var sampleResponses: [SampleResponse] { [.json("[]", name: "empty")] }
        }

        @Test("the default sample answers at once, matched by method and path template")
        func immediate() async throws {
            let samples = SampleTransport(endpoints: [GetItem(id: 0), ListItems()], clock: TestClock())
            let client = CoreFixture.client(StubTransport { _ in .status(500) }) { $0.transport = samples }
            #expect(try await client.send(GetItem(id: 7)) == Item(id: 42, name: "Lamp"))
            #expect(try await client.send(ListItems()) == [])
            #expect(samples.requests.count == 2)
        }

        @Test("a delayed sample waits exactly its delay on the clock")
        func delayed() async throws {
            let clock = TestClock()
            let samples = SampleTransport(endpoints: [GetItem(id: 0)], behavior: .delayed(.seconds(2)), clock: clock)
            let client = CoreFixture.client(StubTransport { _ in .status(500) }) { $0.transport = samples }
            _ = try await client.send(GetItem(id: 1))
            #expect(clock.sleeps == [.seconds(2)])
        }

        @Test("a named sample gives its status; a failure behaviour throws; behaviours are per endpoint")
        func statusAndFailure() async throws {
            let samples = SampleTransport(endpoints: [GetItem(id: 0), ListItems()], clock: TestClock())
            let client = CoreFixture.client(StubTransport { _ in .status(500) }) { $0.transport = samples }
            samples.setBehavior(.sample(named: "missing"), for: GetItem(id: 0))
            let missing = await CoreFixture.networkError { try await client.send(GetItem(id: 1)) }
            guard case .notFound? = missing else {
                Issue.record("expected notFound, got \(String(describing: missing))")
                return
            }
            #expect(try await client.send(ListItems()) == [], "other endpoints keep the default behaviour")
            samples.behavior = .failing(URLError(.notConnectedToInternet))
            let offline = await CoreFixture.networkError { try await client.send(ListItems()) }
            guard case .offline? = offline else {
                Issue.record("expected offline, got \(String(describing: offline))")
                return
            }
        }

        @Test("a request no endpoint declares fails clearly")
        func undeclared() async throws {
            let samples = SampleTransport(endpoints: [ListItems()], clock: TestClock())
            await #expect(throws: URLError(.resourceUnavailable)) {
                try await samples.send(URLRequest(url: URL(string: "https://api.example.test/orders")!))
            }
        }

        struct UserItem: SampleResponseProviding {
            typealias Response = Item
            let id: Int
            var path: String { "/users/5/items/\(id)" }
            var pathTemplate: String? { "/users/{user}/items/{id}" }
            var sampleResponses: [SampleResponse] { [.json(#"{"id": 2, "name": "user item"}"#)] }
        }

        struct Featured: SampleResponseProviding {
            typealias Response = Item
            var path: String { "/items/featured" }
            var sampleResponses: [SampleResponse] { [.json(#"{"id": 3, "name": "featured"}"#)] }
        }

        @Test("each endpoint answers with its own sample: the most specific template wins, whatever the order")
        func mostSpecificTemplate() async throws {
            let samples = SampleTransport(endpoints: [GetItem(id: 0), UserItem(id: 0), Featured()], clock: TestClock())
            let client = APIClient(environment: .stub) { $0.transport = samples }
            let names = [
                try await client.send(GetItem(id: 9)).name,
                try await client.send(UserItem(id: 9)).name,
                try await client.send(Featured()).name,
            ]
            #expect(names == ["Lamp", "user item", "featured"])
        }
    }
}
