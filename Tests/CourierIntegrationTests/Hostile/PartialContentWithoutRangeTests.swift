import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

/// A `206 Partial Content` to a request that asked for no range (a fault on
/// `GET /cache/scripted/{name}`, whose whole body is the 36 bytes `0-9a-z`): the first 10 bytes
/// with `Content-Range: bytes 0-9/36`. Only a range request may get a 206 (RFC 9110 §15.3.7).
///
/// Measured before the fix, on both transports: a buffered and a streamed call succeeded with
/// `0123456789` as the whole body.
@Suite("A 206 to a request without Range")
struct PartialContentWithoutRangeTests {
    static let whole = "0123456789abcdefghijklmnopqrstuvwxyz"

    /// Makes the next `GET /cache/scripted/{name}` in `namespace` answer the part.
    private static func answerWithAPart(_ name: String, namespace: String) async throws {
        try await TestServers.control(
            "POST", "/_faults", namespace: namespace,
            json: [
                "path": "/cache/scripted/\(name)", "method": "GET",
                "faults": [
                    [
                        "status": 206, "body": "0123456789",
                        "headers": ["Content-Range": "bytes 0-9/36", "Cache-Control": "max-age=600", "ETag": "\"a\""],
                    ]
                ],
            ])
    }

    private static func request(_ name: String) -> Request<Data> {
        Request<Data>.get(
            "/cache/scripted/\(name)",
            query: Query([URLQueryItem(name: "h", value: "Cache-Control:max-age=600"), URLQueryItem(name: "body", value: whole)]))
    }

    private static func expectBadServerResponse(_ call: () async throws -> Data, _ label: String) async {
        do {
            let data = try await call()
            Issue.record("\(label): a successful call with \(String(decoding: data, as: UTF8.self).debugDescription)")
        } catch NetworkError.transport(let underlying) {
            #expect(underlying.code == .badServerResponse, "\(label): \(underlying)")
        } catch {
            Issue.record("\(label): expected a transport error, got \(error)")
        }
    }

    @Test("a buffered and a streamed call fail with badServerResponse")
    func aPartIsNotTheWholeBody() async throws {
        let (client, namespace) = try TestServers.apiClient()
        try await Self.answerWithAPart("part", namespace: namespace)
        await Self.expectBadServerResponse({ try await client.send(Self.request("part")) }, "buffered")
        try await Self.answerWithAPart("part", namespace: namespace)
        await Self.expectBadServerResponse(
            {
                let streamed = try await client.stream(Self.request("part"))
                var received = Data()
                for try await chunk in streamed.body { received.append(chunk) }
                return received
            }, "streamed")
        // Neither was sent again: -1, the route's handler never ran (each call was answered by
        // its fault; a retry would have reached the handler).
        #expect(try await CacheConformance.requests("part", namespace: namespace) == -1)
    }

    @Test("through a cache the next call gets the whole body from the server")
    func theNextCallGetsTheWholeBody() async throws {
        let namespace = TestServers.makeNamespace()
        let client = try CacheIntegration.client(namespace: namespace, cache: CacheIntegration.cache())
        try await Self.answerWithAPart("cached", namespace: namespace)
        await Self.expectBadServerResponse({ try await client.send(Self.request("cached")) }, "first")
        let second = try await client.send(Self.request("cached"))
        #expect(String(decoding: second, as: UTF8.self) == Self.whole)
        #expect(try await CacheConformance.requests("cached", namespace: namespace) == 1)
    }
}
