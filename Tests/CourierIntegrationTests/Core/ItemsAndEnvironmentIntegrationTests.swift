import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreIntegrationTests {
    /// The items resource end to end, and switching environments at runtime (issue 2, items 1 and 6).
    @Suite struct ItemsAndEnvironments {
        typealias Item = CoreLive.Item

        struct ItemFilter: Encodable, Sendable {
            var status: String?
            var q: String?
            var limit: Int?
            var offset: Int?
        }

        @Test("list with filters and paging")
        func list() async throws {
            let (client, _) = try TestServers.apiClient()
            let all = try await client.send(Request<CoreLive.ItemPage>.get("/items"))
            #expect(all.items.map(\.name) == ["Widget", "Gadget", "Old Lamp"])
            #expect(all.total == 3)
            let active = try await client.send(
                Request<CoreLive.ItemPage>.get("/items", query: .encodable(ItemFilter(status: "active"))))
            #expect(active.items.map(\.name) == ["Widget", "Gadget"])
            let page = try await client.send(
                Request<CoreLive.ItemPage>.get(
                    "/items", query: .encodable(ItemFilter(status: "active", limit: 1, offset: 1))))
            #expect(page.items.map(\.name) == ["Gadget"])
            #expect(page.total == 2 && page.limit == 1 && page.offset == 1)
            let search: CoreLive.ItemPage = try await client.get("/items", query: ["q": "lamp"])
            #expect(search.items.map(\.id) == [3])
            #expect(search.items.first?.createdAt == Date(timeIntervalSince1970: 1_767_225_600 + 121))
        }

        @Test("CRUD round trip: create 201 + Location, get, replace, patch, delete 204; server state checked")
        func crud() async throws {
            let (client, namespace) = try TestServers.apiClient()

            let created = try await client.response(
                for: Request<Item>.post(
                    "/items", body: CoreLive.NewItem(name: "Lamp + shade", price: 19.5, status: nil, tags: ["home"])))
            #expect(created.statusCode == 201)
            let item = created.value
            #expect(item.name == "Lamp + shade" && item.price == 19.5 && item.status == "active" && item.tags == ["home"])
            #expect(created.response.headers["Location"] == "/ns/\(namespace)/items/\(item.id)")

            let fetched: Item = try await client.get("/items/\(item.id)")
            #expect(fetched == item)

            let replaced: Item = try await client.put(
                "/items/\(item.id)", body: CoreLive.NewItem(name: "Floor lamp", price: 49, status: "archived", tags: []))
            #expect(replaced.name == "Floor lamp" && replaced.status == "archived" && replaced.tags.isEmpty)
            #expect(replaced.createdAt == item.createdAt)

            let patched: Item = try await client.patch("/items/\(item.id)", body: ["price": 45.25])
            #expect(patched.price == 45.25 && patched.name == "Floor lamp")

            var stats = try await TestServers.stats(namespace: namespace)
            #expect((stats["items"] as? [String: Any])?["count"] as? Int == 4)
            #expect((stats["items"] as? [String: Any])?["created"] as? Int == 1)
            #expect((stats["items"] as? [String: Any])?["updated"] as? Int == 2)

            try await client.delete("/items/\(item.id)")
            let gone = await CoreLive.networkError { try await client.send(Request<Item>.get("/items/\(item.id)")) }
            guard case .notFound(let response)? = gone else {
                Issue.record("expected notFound, got \(String(describing: gone))")
                return
            }
            #expect(response.code == "not_found")

            stats = try await TestServers.stats(namespace: namespace)
            #expect((stats["items"] as? [String: Any])?["count"] as? Int == 3)
            #expect((stats["items"] as? [String: Any])?["deleted"] as? Int == 1)
            #expect(try await TestServers.requestCount("POST /items", namespace: namespace) == 1)
            #expect(try await TestServers.requestCount("PUT /items/{id}", namespace: namespace) == 1)
            #expect(try await TestServers.requestCount("PATCH /items/{id}", namespace: namespace) == 1)
            #expect(try await TestServers.requestCount("DELETE /items/{id}", namespace: namespace) == 1)
            #expect(try await TestServers.requestCount("GET /items/{id}", namespace: namespace) == 2)
        }

        @Test("switching between two namespaces at runtime: state and counters follow the environment")
        func switchNamespaces() async throws {
            let first = TestServers.makeNamespace("env-a")
            let second = TestServers.makeNamespace("env-b")
            let client = APIClient(
                environment: try TestServers.apiEnvironment(namespace: first), configure: TestTransport.configure)
            let created: Item = try await client.post("/items", body: CoreLive.NewItem(name: "Only in A", price: 1))

            try await client.switchEnvironment(to: try TestServers.apiEnvironment(namespace: second))
            let inSecond = try await client.send(Request<CoreLive.ItemPage>.get("/items"))
            #expect(!inSecond.items.contains { $0.name == "Only in A" })
            let missing = await CoreLive.networkError { try await client.send(Request<Item>.get("/items/\(created.id)")) }
            #expect(missing?.statusCode == 404)

            try await client.switchEnvironment(to: try TestServers.apiEnvironment(namespace: first))
            let back: Item = try await client.get("/items/\(created.id)")
            #expect(back.name == "Only in A")

            #expect(try await TestServers.requestCount("GET /items/{id}", namespace: first) == 1)
            #expect(try await TestServers.requestCount("GET /items/{id}", namespace: second) == 1)
            #expect(try await TestServers.requestCount("GET /items", namespace: second) == 1)
            #expect(try await TestServers.requestCount("POST /items", namespace: second) == 0)
        }

        struct HTTPBinGet: Decodable, Sendable {
            var args: [String: String]
            var url: String
        }

        @Test("switching between the two servers at runtime")
        func switchServers() async throws {
            let (client, namespace) = try TestServers.apiClient()
            let echo = try await client.send(Request<Echo>.get("/echo"))
            #expect(echo.namespace == namespace)
            let httpbin = try TestServers.httpbinEnvironment()
            try await client.switchEnvironment(to: httpbin)
            let got = try await client.send(Request<HTTPBinGet>.get("/get", query: ["server": "httpbin"]))
            #expect(got.args == ["server": "httpbin"])
            #expect(URL(string: got.url)?.port == httpbin.baseURL.port)
            try await client.switchEnvironment(to: try TestServers.apiEnvironment(namespace: namespace))
            _ = try await client.send(Request<Echo>.get("/echo"))
            #expect(try await TestServers.requestLog(namespace: namespace, path: "/echo").count == 2)
        }
    }
}
