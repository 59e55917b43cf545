import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

/// Helpers for the issue 17 routes (`TestServer/routes_cache_conformance.py`).
enum CacheConformance {
    /// `GET /cache/scripted/{name}` answering with exactly `fields` (name, value), in order.
    static func scripted(
        _ name: String, _ fields: [(String, String)], extra: [URLQueryItem] = [],
        headers: HTTPHeaders = [:]
    ) -> Request<HTTPResponse> {
        let items = fields.map { URLQueryItem(name: "h", value: "\($0.0):\($0.1)") } + extra
        return .raw(.get, "/cache/scripted/\(name)", query: Query(items), headers: headers)
    }

    /// `GET /cache/ranged/{name}` (36 bytes `0-9a-z`), with a `Range` when given.
    static func ranged(_ name: String, range: String? = nil) -> Request<HTTPResponse> {
        .raw(.get, "/cache/ranged/\(name)", headers: range.map { ["Range": $0] } ?? [:])
    }

    /// The `cacheConformance.{name}` counters.
    static func stats(_ name: String, namespace: String) async throws -> [String: Any] {
        let stats = try await TestServers.stats(namespace: namespace)
        return ((stats["cacheConformance"] as? [String: Any])?[name] as? [String: Any]) ?? [:]
    }

    static func requests(_ name: String, namespace: String) async throws -> Int {
        try await stats(name, namespace: namespace)["requests"] as? Int ?? -1
    }
}

extension CachingIntegrationTests {
    /// Issue 17 against the reference server: each numbered item of the issue, asserting on the
    /// server's request counters and on the exact bytes and header fields the client sees.
    @Suite struct Conformance {
        private func client(_ namespace: String, cache: HTTPCache = CacheIntegration.cache()) throws -> APIClient {
            try CacheIntegration.client(namespace: namespace, cache: cache)
        }

        @Test(arguments: [[("Age", "7200, 0")], [("Age", "7200"), ("Age", "0")]])
        func item1OldAgeListIsStale(_ ages: [(String, String)]) async throws {
            let namespace = TestServers.makeNamespace("cache17")
            let client = try client(namespace)
            let request = CacheConformance.scripted("age", [("Cache-Control", "max-age=3600")] + ages)
            _ = try await client.response(for: request)
            let second = try await client.response(for: request)
            #expect(try await CacheConformance.requests("age", namespace: namespace) == 2)
            #expect(second.context.cacheOutcome == .miss)
        }

        @Test(arguments: [
            ("Thu 18 Aug 2050 02:01:18 GMT", 2), ("Thu, 18  Aug  2050 02:01:18 GMT", 2),
            ("Thu, 18-Aug-2050 02:01:18 GMT", 2), ("Thu, 18 Aug 2050 2:01:18 GMT", 2),
            ("Thu, 18 Aug 2050 02:01:18 GMT", 1),
        ])
        func item2InvalidExpiresIsAlreadyExpired(_ expires: String, _ requests: Int) async throws {
            let namespace = TestServers.makeNamespace("cache17")
            let client = try client(namespace)
            let request = CacheConformance.scripted("expires", [("Expires", expires)])
            _ = try await client.response(for: request)
            _ = try await client.response(for: request)
            #expect(try await CacheConformance.requests("expires", namespace: namespace) == requests)
        }

        @Test func item3ConnectionSpecificFieldsAreNotReplayed() async throws {
            let namespace = TestServers.makeNamespace("cache17")
            let client = try client(namespace)
            let request = CacheConformance.scripted(
                "hop",
                [
                    ("Cache-Control", "max-age=3600"), ("Connection", "x-hop"), ("x-hop", "1"), ("c", "3"),
                    ("Keep-Alive", "timeout=5"), ("Proxy-Authenticate", "Basic realm=x"), ("TE", "trailers"),
                ])
            let first = try await client.response(for: request)
            let cached = try await client.response(for: request)
            #expect(first.response.headers["x-hop"] == "1", "the network response itself is untouched")
            #expect(cached.context.cacheOutcome == .hit)
            #expect(try await CacheConformance.requests("hop", namespace: namespace) == 1)
            #expect(cached.response.headers["c"] == "3")
            for name in ["x-hop", "Connection", "Keep-Alive", "Proxy-Authenticate", "TE"] {
                #expect(!cached.response.headers.contains(name), "\(name) replayed from the cache")
            }
        }

        @Test func item4RangeIsServedFromTheStoredCompleteResponse() async throws {
            let namespace = TestServers.makeNamespace("cache17")
            let client = try client(namespace)
            _ = try await client.response(for: CacheConformance.ranged("whole"))
            let part = try await client.response(for: CacheConformance.ranged("whole", range: "bytes=5-"))
            #expect(try await CacheConformance.requests("whole", namespace: namespace) == 1)
            #expect(part.statusCode == 206)
            #expect(part.context.cacheOutcome == .hit)
            #expect(part.response.headers["Content-Range"] == "bytes 5-35/36")
            #expect(String(decoding: part.response.data, as: UTF8.self) == "56789abcdefghijklmnopqrstuvwxyz")
        }

        @Test func item4PartsAreStoredAndCombinedIntoTheCompleteResponse() async throws {
            let namespace = TestServers.makeNamespace("cache17")
            let client = try client(namespace)
            let head = try await client.response(for: CacheConformance.ranged("parts", range: "bytes=0-9"))
            let tail = try await client.response(for: CacheConformance.ranged("parts", range: "bytes=10-"))
            let whole = try await client.response(for: CacheConformance.ranged("parts"))
            let middle = try await client.response(for: CacheConformance.ranged("parts", range: "bytes=8-11"))
            let stats = try await CacheConformance.stats("parts", namespace: namespace)
            #expect(head.statusCode == 206 && tail.statusCode == 206)
            #expect(stats["requests"] as? Int == 2)
            #expect(stats["lastRange"] as? String == "bytes=10-")
            #expect(whole.statusCode == 200)
            #expect(whole.context.cacheOutcome == .hit)
            #expect(String(decoding: whole.response.data, as: UTF8.self) == "0123456789abcdefghijklmnopqrstuvwxyz")
            #expect(String(decoding: middle.response.data, as: UTF8.self) == "89ab")
        }

        @Test func item5MustUnderstandWithAnUnderstoodStatusIsStored() async throws {
            let namespace = TestServers.makeNamespace("cache17")
            let client = try client(namespace)
            let request = CacheConformance.scripted("mu", [("Cache-Control", "max-age=3600, no-store, must-understand")])
            _ = try await client.response(for: request)
            let second = try await client.response(for: request)
            #expect(second.context.cacheOutcome == .hit)
            #expect(try await CacheConformance.requests("mu", namespace: namespace) == 1)
        }

        @Test func item6AnotherVariantIsValidatedWithTheStoredETagsAnd304SelectsOne() async throws {
            let namespace = TestServers.makeNamespace("cache17")
            let client = try client(namespace)
            func get(_ language: String) async throws -> Response<HTTPResponse> {
                try await client.response(
                    for: CacheConformance.scripted(
                        "variants", [("Cache-Control", "max-age=3600"), ("Vary", "Accept-Language")],
                        extra: [URLQueryItem(name: "tagFromLanguage", value: "1")], headers: ["Accept-Language": language]))
            }
            _ = try await get("de")
            let swiss = try await get("de-CH")
            let swissAgain = try await get("de-CH")
            let stats = try await CacheConformance.stats("variants", namespace: namespace)
            #expect(stats["requests"] as? Int == 2)
            #expect(stats["notModified"] as? Int == 1)
            #expect(stats["lastIfNoneMatch"] as? String == #""de""#)
            #expect(swiss.context.cacheOutcome == .revalidated)
            #expect(swiss.statusCode == 200)
            #expect(swiss.response.headers["ETag"] == #""de""#)
            #expect(swissAgain.context.cacheOutcome == .hit)
        }

        @Test(arguments: [("DE,en", 1), (" de ,   EN", 1), ("fr", 2)])
        func item7AcceptLanguageIsNormalisedForVary(_ later: String, _ requests: Int) async throws {
            let namespace = TestServers.makeNamespace("cache17")
            let client = try client(namespace)
            let fields = [("Cache-Control", "max-age=3600"), ("Vary", "Accept-Language")]
            _ = try await client.response(for: CacheConformance.scripted("lang", fields, headers: ["Accept-Language": "en, de"]))
            _ = try await client.response(for: CacheConformance.scripted("lang", fields, headers: ["Accept-Language": later]))
            #expect(try await CacheConformance.requests("lang", namespace: namespace) == requests)
        }

        #if canImport(FoundationNetworking)
        // Linux URLSession (libcurl) fails these tasks; Apple's URLSession differs per case (an
        // unknown coding may arrive undecoded), so the expectations are Linux-only.
        @Test(arguments: [
            ("unknown-content-coding", ResponseCodingFailure.Reason.unsupportedCoding),
            ("corrupt-gzip", .corruptContent), ("bad-chunked", .malformedChunkedFraming),
        ])
        func item8UndecodableBodiesAreATypedError(_ kind: String, _ reason: ResponseCodingFailure.Reason) async throws {
            let namespace = TestServers.makeNamespace("cache17")
            let client = try client(namespace)
            if TestTransport.isCurl, reason == .unsupportedCoding {
                // CurlTransport receives a buffered body undecoded and gives a GET the bytes as
                // sent, with their Content-Encoding (before: asked again without decoding, 2 requests).
                let response = try await client.response(for: Request<HTTPResponse>.raw(.get, "/cache/coding/\(kind)"))
                #expect(response.value.data == Data("hello".utf8))
                #expect(response.value.headers["Content-Encoding"] == "x-unknown")
                #expect(try await CacheConformance.requests("coding-\(kind)", namespace: namespace) == 1)
                return
            }
            do {
                let response = try await client.response(for: Request<HTTPResponse>.raw(.get, "/cache/coding/\(kind)"))
                Issue.record("expected undecodableResponse, got HTTP \(response.statusCode)")
            } catch NetworkError.undecodableResponse(let failure) {
                #expect(failure.reason == reason, "\(failure)")
            }
            #expect(try await CacheConformance.requests("coding-\(kind)", namespace: namespace) == 1)
        }

        /// `Transfer-Encoding: x-unknown, chunked` is a transfer-coding failure, not a content
        /// coding one: CurlTransport tells them apart from the response's fields. URLSession on
        /// Linux reports both with libcurl's one message, so it can only say "unsupported coding".
        @Test func item8AnUnknownTransferCodingIsLabelledAsSuch() async throws {
            let namespace = TestServers.makeNamespace("cache17")
            let client = try client(namespace)
            do {
                let response = try await client.response(
                    for: Request<HTTPResponse>.raw(.get, "/cache/coding/unknown-transfer-coding"))
                Issue.record("expected undecodableResponse, got HTTP \(response.statusCode)")
            } catch NetworkError.undecodableResponse(let failure) {
                let expected: ResponseCodingFailure.Reason =
                    TestTransport.isCurl ? .unsupportedTransferCoding : .unsupportedCoding
                #expect(failure.reason == expected, "\(failure)")
            }
            #expect(try await CacheConformance.requests("coding-unknown-transfer-coding", namespace: namespace) == 1)
        }
        #endif
    }
}
