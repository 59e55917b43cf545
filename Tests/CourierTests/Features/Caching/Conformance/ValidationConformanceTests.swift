import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension CachingTests {
    /// Issue 17, items 5 and 6: `must-understand` (RFC 9111 §5.2.2.3) and validation with the
    /// entity tags of every stored variant (§4.3.1, §4.3.4).
    @Suite struct ValidationConformance {
        let clock = ManualDate()

        @Test func mustUnderstandWithAnUnderstoodStatusIsStoredDespiteNoStore() async throws {
            let stub = StubTransport { [clock] _ in
                CacheFixture.item(clock: clock, headers: ["Cache-Control": "max-age=3600, no-store, must-understand"])
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem())
            let second = try await client.response(for: CacheFixture.getItem())
            #expect(second.context.cacheOutcome == .hit)
            #expect(stub.requestCount == 1)
        }

        @Test(arguments: [599, 299])
        func mustUnderstandWithAnUnknownStatusIsNeverStored(_ status: Int) async throws {
            let stub = StubTransport { [clock] _ in
                .json(
                    "{}", status: status,
                    headers: ["Cache-Control": "max-age=3600, must-understand", "Date": HTTPDate.string(from: clock.now)])
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.response(for: Request<HTTPResponse>.raw(.get, "/items/lamp"))
            _ = try await client.response(for: Request<HTTPResponse>.raw(.get, "/items/lamp"))
            #expect(stub.requestCount == 2)
        }

        /// An origin varying on `Accept-Language` whose entity tag is the language; a conditional
        /// request is answered 304 naming `answerTag` when set, else with the full response.
        private func origin(answerTag: Locked<String?>) -> StubTransport {
            StubTransport { [clock] request in
                if request.value(forHTTPHeaderField: "If-None-Match") != nil, let tag = answerTag.current {
                    return HTTPResponse(
                        statusCode: 304,
                        headers: ["ETag": "\"\(tag)\"", "Cache-Control": "max-age=60", "Date": HTTPDate.string(from: clock.now)])
                }
                let language = request.value(forHTTPHeaderField: "Accept-Language") ?? "none"
                return CacheFixture.item(
                    language, clock: clock,
                    headers: ["ETag": "\"\(language)\"", "Cache-Control": "max-age=60", "Vary": "Accept-Language"])
            }
        }

        private func get(_ client: APIClient, _ language: String) async throws -> Response<CacheFixture.Item> {
            try await client.response(for: CacheFixture.getItem(headers: ["Accept-Language": language]))
        }

        @Test func requestOfAnotherVariantListsTheStoredETagsAndA304SelectsOne() async throws {
            let answerTag = Locked<String?>(nil)
            let stub = origin(answerTag: answerTag)
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await get(client, "de")
            answerTag.set("de")
            let swiss = try await get(client, "de-CH")
            let swissAgain = try await get(client, "de-CH")

            #expect(stub.requests.last?.value(forHTTPHeaderField: "If-None-Match") == #""de""#)
            #expect(swiss.context.cacheOutcome == .revalidated)
            #expect(swiss.value.name == "de", "the 304 selected the stored de variant")
            #expect(swissAgain.context.cacheOutcome == .hit, "and it is now stored for de-CH too")
            #expect(stub.requestCount == 2)
        }

        @Test func staleVariantIsValidatedWithEveryStoredTagItsOwnFirst() async throws {
            let answerTag = Locked<String?>(nil)
            let stub = origin(answerTag: answerTag)
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await get(client, "en")
            let german = try await get(client, "de")
            #expect(stub.requests.last?.value(forHTTPHeaderField: "If-None-Match") == #""en""#)
            #expect(german.value.name == "de" && german.context.cacheOutcome == .miss, "a full answer is stored as a new variant")
            clock.advance(by: 120)
            answerTag.set("en")
            let germanAgain = try await get(client, "de")

            #expect(stub.requests.last?.value(forHTTPHeaderField: "If-None-Match") == #""de", "en""#)
            #expect(germanAgain.context.cacheOutcome == .revalidated)
            #expect(germanAgain.value.name == "en", "the origin chose the en representation for this request (§4.3.4)")
            #expect(stub.requestCount == 3)
        }

        @Test func notModifiedNamingNoStoredTagRefetchesUnconditionally() async throws {
            let stub = origin(answerTag: Locked("other"))
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await get(client, "de")
            let french = try await get(client, "fr")
            #expect(stub.requestCount == 3)
            #expect(stub.requests.last?.value(forHTTPHeaderField: "If-None-Match") == nil)
            #expect(french.value.name == "fr")
            #expect(french.context.cacheOutcome == .miss)
        }
    }
}
