import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension CachingTests {
    /// Issue 17, item 4: ranges answered from stored responses, 206 parts stored and combined
    /// (RFC 9111 §3.3, §3.4; RFC 9110 §14).
    @Suite struct PartialContentConformance {
        let clock = ManualDate()

        private func body(_ text: String, status: Int = 200, _ headers: HTTPHeaders = [:]) -> HTTPResponse {
            var headers = headers
            headers.replace("Date", with: HTTPDate.string(from: clock.now))
            headers.replace("Content-Length", with: String(text.utf8.count))
            return HTTPResponse(statusCode: status, headers: headers, body: Data(text.utf8))
        }

        private func get(_ client: APIClient, range: String? = nil) async throws -> Response<HTTPResponse> {
            try await client.response(for: Request<HTTPResponse>.raw(.get, "/file", headers: range.map { ["Range": $0] } ?? [:]))
        }

        @Test(arguments: [
            ("bytes=0-1", "01", "bytes 0-1/11"), ("bytes=1-", "1234567890", "bytes 1-10/11"),
            ("bytes=-1", "0", "bytes 10-10/11"), ("bytes=5-100", "567890", "bytes 5-10/11"),
            ("bytes=-100", "01234567890", "bytes 0-10/11"),
        ])
        func storedCompleteResponseAnswersARangeAs206(_ range: String, _ expected: String, _ contentRange: String) async throws {
            let stub = StubTransport { [self] _ in body("01234567890", ["Cache-Control": "max-age=3600"]) }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await get(client)
            let part = try await get(client, range: range)
            #expect(stub.requestCount == 1)
            #expect(part.context.cacheOutcome == .hit)
            #expect(part.statusCode == 206)
            #expect(String(decoding: part.response.data, as: UTF8.self) == expected)
            #expect(part.response.headers["Content-Range"] == contentRange)
            #expect(part.response.headers["Content-Length"] == String(expected.utf8.count))
        }

        @Test(arguments: ["bytes=11-", "bytes=0-1, 3-4", "items=0-1", "bytes=5-2"])
        func unsatisfiableOrUnsupportedRangesGoToTheOrigin(_ range: String) async throws {
            let stub = StubTransport { [self] request in
                request.value(forHTTPHeaderField: "Range") == nil
                    ? body("01234567890", ["Cache-Control": "max-age=3600"])
                    : body("", status: 416, ["Content-Range": "bytes */11"])
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await get(client)
            let answer = try await get(client, range: range)
            #expect(stub.requestCount == 2)
            #expect(stub.requests.last?.value(forHTTPHeaderField: "Range") == range)
            #expect(answer.statusCode == 416)
            #expect(try await get(client).context.cacheOutcome == .hit, "the 416 did not evict the stored response")
        }

        @Test func storedPartAnswersRangesInsideItButNeverTheWhole() async throws {
            let stub = StubTransport { [self] request in
                request.value(forHTTPHeaderField: "Range") == nil
                    ? body("0123456789", ["Cache-Control": "max-age=3600"])
                    : body("56789", status: 206, ["Cache-Control": "max-age=3600", "Content-Range": "bytes 5-9/10"])
            }
            let cache = CacheFixture.cache(clock: clock)
            let client = CacheFixture.client(stub, cache: cache)
            _ = try await get(client, range: "bytes=-5")
            let inside = try await get(client, range: "bytes=6-8")
            let suffix = try await get(client, range: "bytes=-1")
            #expect(stub.requestCount == 1)
            #expect(inside.statusCode == 206)
            #expect(String(decoding: inside.response.data, as: UTF8.self) == "678")
            #expect(inside.response.headers["Content-Range"] == "bytes 6-8/10")
            #expect(String(decoding: suffix.response.data, as: UTF8.self) == "9")

            _ = try await get(client, range: "bytes=0-3")
            #expect(stub.requestCount == 2, "a range outside the stored part goes to the origin")
            let whole = try await get(client)
            #expect(stub.requestCount == 3, "a part never answers a request for the whole representation")
            #expect(whole.statusCode == 200)
        }

        @Test func partsWithTheSameStrongETagCombineIntoACompleteResponse() async throws {
            let stub = StubTransport { [self] request in
                switch request.value(forHTTPHeaderField: "Range") {
                case "bytes=0-4":
                    return body(
                        "01234", status: 206,
                        ["Cache-Control": "max-age=3600", "ETag": #""v1""#, "Content-Range": "bytes 0-4/10", "A": "1"])
                default:
                    return body(
                        "56789", status: 206,
                        ["Cache-Control": "max-age=3600", "ETag": #""v1""#, "Content-Range": "bytes 5-9/10", "A": "2"])
                }
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await get(client, range: "bytes=0-4")
            _ = try await get(client, range: "bytes=5-")
            let whole = try await get(client)
            let middle = try await get(client, range: "bytes=3-6")

            #expect(stub.requestCount == 2)
            #expect(whole.context.cacheOutcome == .hit)
            #expect(whole.statusCode == 200)
            #expect(String(decoding: whole.response.data, as: UTF8.self) == "0123456789")
            #expect(!whole.response.headers.contains("Content-Range"))
            #expect(whole.response.headers["Content-Length"] == "10")
            #expect(whole.response.headers["A"] == "2", "header fields come from the newer part")
            #expect(String(decoding: middle.response.data, as: UTF8.self) == "3456")
        }

        @Test(arguments: [(#""v1""#, #""v2""#), (#"W/"v1""#, #"W/"v1""#), ("", "")])
        func partsWithoutAMatchingStrongETagAreNotCombined(_ first: String, _ second: String) async throws {
            let stub = StubTransport { [self] request in
                let isFirst = request.value(forHTTPHeaderField: "Range") == "bytes=0-4"
                var headers: HTTPHeaders = [
                    "Cache-Control": "max-age=3600", "Content-Range": isFirst ? "bytes 0-4/10" : "bytes 5-9/10",
                ]
                let tag = isFirst ? first : second
                if !tag.isEmpty { headers.replace("ETag", with: tag) }
                return body(isFirst ? "01234" : "56789", status: 206, headers)
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await get(client, range: "bytes=0-4")
            _ = try await get(client, range: "bytes=5-9")
            _ = try await get(client, range: "bytes=0-9")
            #expect(stub.requestCount == 3)
        }

        @Test func aPartNeverReplacesTheStoredCompleteResponseOfTheSameRepresentation() async throws {
            let stub = StubTransport { [self] request in
                request.value(forHTTPHeaderField: "Range") == nil
                    ? body("0123456789", ["Cache-Control": "max-age=10", "ETag": #""v1""#])
                    : body(
                        "01234", status: 206,
                        ["Cache-Control": "max-age=3600", "ETag": #""v1""#, "Content-Range": "bytes 0-4/10"])
            }
            let cache = CacheFixture.cache(clock: clock)
            let client = CacheFixture.client(stub, cache: cache)
            _ = try await get(client)
            clock.advance(by: 20)
            _ = try await get(client, range: "bytes=0-4")  // stale: validated with the Range, origin sends a 206
            let stored = await cache.storage.responses(
                for: CacheKey(partition: "user-1", url: CacheFixture.baseURL.appendingPathComponent("file")))
            #expect(stored.map(\.statusCode) == [200])
            #expect(stored.first?.body.count == 10)
        }

        @Test func contentCodedBodiesAreNeverSliced() async throws {
            let stub = StubTransport { [self] _ in
                body("0123456789", ["Cache-Control": "max-age=3600", "Content-Encoding": "gzip"])
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await get(client)
            _ = try await get(client, range: "bytes=0-1")
            #expect(stub.requestCount == 2, "byte ranges count encoded bytes; the stored body is decoded")
        }

        @Test(arguments: ["bytes=0-99", "bytes=100-", "bytes=-5", "Bytes=0-4"])
        func byteRangesParse(_ text: String) {
            #expect(ByteRange(text) != nil)
        }

        @Test(arguments: ["bytes=", "bytes=-", "bytes=-0", "bytes=a-b", "bytes=0-1,2-3", "bytes=5-4", "pages=1-2"])
        func malformedOrMultipleRangesAreNotAnswered(_ text: String) {
            #expect(ByteRange(text) == nil)
        }

        @Test(arguments: ["bytes 0-4/*", "bytes */10", "bytes 5-4/10", "bytes 0-10/10", "0-4/10"])
        func contentRangesWithoutAKnownCompleteLengthAreRejected(_ text: String) {
            #expect(ContentRange(["Content-Range": text]) == nil)
        }
    }
}
