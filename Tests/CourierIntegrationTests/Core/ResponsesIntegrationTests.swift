import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreIntegrationTests {
    /// Responses from the reference server decoded through the client: dates, lossy lists, unknown
    /// enum values, empty bodies (issue 2, item 8).
    @Suite struct Responses {
        struct Dates: Decodable, Sendable {
            var fractional: Date
            var milliseconds: Date
            var whole: Date
            var offset: Date
            var dateOnly: Date
        }

        @Test("/dates: fraction, Z, offset and date-only decode to the right instants")
        func dates() async throws {
            let (client, _) = try TestServers.apiClient()
            let dates = try await client.send(Request<Dates>.get("/dates"))
            #expect(abs(dates.fractional.timeIntervalSince1970 - 1_779_749_187.580497) < 0.000_01)
            #expect(abs(dates.milliseconds.timeIntervalSince1970 - 1_779_749_187.580) < 0.000_01)
            #expect(dates.whole.timeIntervalSince1970 == 1_779_749_187)
            #expect(dates.offset.timeIntervalSince1970 == 1_779_749_187 - 2 * 3600)
            #expect(dates.dateOnly.timeIntervalSince1970 == 1_779_667_200)
        }

        struct Entry: Decodable, Equatable, Sendable {
            var id: Int
            var name: String
        }

        struct StrictList: Decodable, Sendable { var items: [Entry] }
        struct LossyList: Decodable, Sendable { var items: LossyArray<Entry> }

        @Test("/lossy strictly: .decoding whose coding path is exactly items[1].name")
        func lossyStrict() async throws {
            let (client, _) = try TestServers.apiClient()
            let error = await CoreLive.networkError { try await client.send(Request<StrictList>.get("/lossy")) }
            guard case .decoding(let failure)? = error else {
                Issue.record("expected decoding, got \(String(describing: error))")
                return
            }
            #expect(failure.codingPath == "items[1].name")
            #expect(failure.statusCode == 200)
            #expect(!failure.isEmptyBody)
        }

        @Test("/lossy leniently: ids 1 and 3, one skipped at index 1")
        func lossyLenient() async throws {
            let (client, _) = try TestServers.apiClient()
            let list = try await client.send(Request<LossyList>.get("/lossy"))
            #expect(list.items.map(\.id) == [1, 3])
            #expect(list.items.skippedCount == 1)
            #expect(list.items.skipped.first?.index == 1)
        }

        enum Status: ExtensibleEnum {
            case active, archived
            case unknown(String)
            static let knownCases: [Status] = [.active, .archived]
            var rawValue: String {
                switch self {
                case .active: "active"
                case .archived: "archived"
                case .unknown(let raw): raw
                }
            }
        }

        struct WithStatus: Codable, Sendable { var status: Status }

        @Test("/unknown-enum decodes to unknown(\"archived_v2\") and is sent back unchanged")
        func unknownEnum() async throws {
            let (client, _) = try TestServers.apiClient()
            let value = try await client.send(Request<WithStatus>.get("/unknown-enum"))
            #expect(value.status == .unknown("archived_v2"))
            #expect(!value.status.isKnown)
            let echo = try await client.send(Request<Echo>.post("/echo", body: value))
            #expect(echo.body == #"{"status":"archived_v2"}"#)
        }

        @Test("DELETE → 204 with Content-Length: 0 succeeds for Void and EmptyResponse; the item is gone")
        func deleteNoContent() async throws {
            let (client, namespace) = try TestServers.apiClient()
            let deleted = try await client.response(for: Request<Void>.delete("/items/1"))
            #expect(deleted.statusCode == 204)
            #expect(deleted.response.headers["Content-Length"] == "0")
            #expect(deleted.response.data.isEmpty)
            let empty = try await client.send(Request<EmptyResponse>.delete("/items/2"))
            #expect(empty == EmptyResponse())
            let stats = try await TestServers.stats(namespace: namespace)
            #expect((stats["items"] as? [String: Any])?["deleted"] as? Int == 2)
            #expect((stats["items"] as? [String: Any])?["count"] as? Int == 1)
        }

        @Test("DELETE → 204 with a model response type fails with the empty-body decoding error")
        func deleteIntoModel() async throws {
            let (client, namespace) = try TestServers.apiClient()
            let error = await CoreLive.networkError { try await client.send(Request<CoreLive.Item>.delete("/items/3")) }
            guard case .decoding(let failure)? = error else {
                Issue.record("expected decoding, got \(String(describing: error))")
                return
            }
            #expect(failure.isEmptyBody)
            #expect(failure.statusCode == 204)
            // The server did delete it: the failure is about the response type, not the request.
            #expect(try await TestServers.requestCount("DELETE /items/{id}", namespace: namespace) == 1)
        }

        @Test("an Optional model is nil on 204 and on a zero-length 200, and a value otherwise")
        func optionalModel() async throws {
            let (client, _) = try TestServers.apiClient()
            #expect(try await client.send(Request<CoreLive.Item?>.get("/no-content")) == nil)
            #expect(try await client.send(Request<CoreLive.Item?>.get("/empty")) == nil)
            #expect(try await client.send(Request<CoreLive.Item?>.get("/items/1"))?.name == "Widget")
        }

        @Test("HEAD /items/1: Void succeeds with the GET's headers and no body; a model is the empty-body error")
        func head() async throws {
            let (client, namespace) = try TestServers.apiClient()
            let response = try await client.response(for: Request<Void>.head("/items/1"))
            #expect(response.statusCode == 200)
            #expect(response.response.mediaType == "application/json")
            #expect(response.response.data.isEmpty)
            let error = await CoreLive.networkError {
                try await client.send(Request<CoreLive.Item>(method: .head, path: "/items/1"))
            }
            guard case .decoding(let failure)? = error else {
                Issue.record("expected decoding, got \(String(describing: error))")
                return
            }
            #expect(failure.isEmptyBody)
            #expect(try await TestServers.requestCount("HEAD /items/{id}", namespace: namespace) == 2)
            let missing = await CoreLive.networkError { try await client.send(Request<Void>.head("/items/999")) }
            #expect(missing?.statusCode == 404)
        }
    }
}
