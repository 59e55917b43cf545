import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension CachingTests {
    /// What a HEAD may do to a stored GET (RFC 9111 §4.3.5), and what a streamed body that ended
    /// short may not become.
    @Suite struct HeadAndShortBodies {
        let clock = ManualDate()

        @Test func headWithAnotherContentLengthDoesNotFreshenTheStoredGet() async throws {
            let stub = StubTransport { [clock] request in
                if request.httpMethod == "HEAD" {
                    // The representation changed (no validators anywhere): a new length.
                    return HTTPResponse(
                        statusCode: 200,
                        headers: [
                            "Cache-Control": "max-age=600", "Content-Length": "999",
                            "Date": HTTPDate.string(from: clock.now),
                        ])
                }
                var response = CacheFixture.item(version: 1, clock: clock, headers: ["Cache-Control": "max-age=10"])
                response.headers.replace("Content-Length", with: String(response.data.count))
                return response
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem())
            clock.advance(by: 20)
            _ = try await client.response(for: Request<HTTPResponse>.raw(.head, "/items/lamp"))
            let get = try await client.response(for: CacheFixture.getItem())
            #expect(get.context.cacheOutcome != .hit, "a HEAD with another Content-Length must not freshen (§4.3.5)")
            #expect(stub.requests.map(\.httpMethod) == ["GET", "HEAD", "GET"])
        }

        @Test func headAnsweredByARedirectTargetDoesNotFreshenTheStoredGet() async throws {
            let redirects = Locked(false)
            let stub = StubTransport { [clock] request in
                let url = try #require(request.url)
                if redirects.current, url.path == "/v1/items/lamp" {
                    return HTTPResponse(statusCode: 302, headers: ["Location": "/v1/items/v2"], url: url)
                }
                if request.httpMethod == "HEAD" {
                    return HTTPResponse(
                        statusCode: 200,
                        headers: ["Cache-Control": "max-age=3600", "Date": HTTPDate.string(from: clock.now)], url: url)
                }
                var response = CacheFixture.item(
                    version: url.path == "/v1/items/lamp" ? 1 : 2, clock: clock, headers: ["Cache-Control": "max-age=10"])
                response.url = url
                return response
            }
            let client = CacheFixture.client(stub, cache: CacheFixture.cache(clock: clock))
            _ = try await client.send(CacheFixture.getItem())  // version 1, fresh for 10 s
            clock.advance(by: 11)
            redirects.withLock { $0 = true }  // the URL now points to /items/v2
            let head = try await client.response(for: Request<HTTPResponse>.raw(.head, "/items/lamp"))
            let get = try await client.response(for: CacheFixture.getItem())
            #expect(head.context.redirects.count == 1)
            #expect(get.value.version == 2, "the target's HEAD is not a HEAD of /items/lamp")
            #expect(get.context.cacheOutcome != .hit)
        }

        @Test func aStreamEndingShortOfItsLengthIsNotStored() async throws {
            let headers: HTTPHeaders = ["Cache-Control": "max-age=60", "Content-Type": "text/plain", "Content-Length": "10"]
            let chunks = AsyncStream<Data> { continuation in
                continuation.yield(Data("abcd".utf8))
                continuation.finish()  // the connection ended after 4 of 10 bytes
            }
            var short = HTTPResponse(statusCode: 200, headers: headers)
            short.body = MessageBody(chunks, length: .known(10))
            let whole = HTTPResponse(statusCode: 200, headers: headers, body: Data("abcdefghij".utf8))
            let transport = StubTransport(responses: [.success(short), .success(whole)])
            let client = APIClient(environment: APIEnvironment(name: "stub", baseURL: URL(string: "https://api.example.com")!)) {
                $0.transport = transport
                $0.interceptors = .standard(
                    cache: HTTPCache(storage: MemoryCacheStorage()), retry: RetryInterceptor(clock: TestClock()))
            }
            let first = try await client.stream(Request<Data>.get("/feed"))
            _ = try? await first.body.collect(upTo: 100)
            let second = try await client.stream(Request<Data>.get("/feed"))
            let body = try await second.body.collect(upTo: 100)
            #expect(body == Data("abcdefghij".utf8), "served a truncated body: \(String(decoding: body, as: UTF8.self))")
            #expect(second.context.cacheOutcome != .hit)
        }
    }
}

extension CachingTests {
    /// A response that varies on a credential the cache never sees (added below it) is not stored:
    /// every later request would match its "absent" value.
    @Suite struct VaryOnCredentials {
        let clock = ManualDate()

        private func temporaryDirectory() -> URL {
            FileManager.default.temporaryDirectory.appendingPathComponent("courier-vary-\(UUID().uuidString)")
        }

        @Test func varyCookieTellsSessionsApartWhenTheTransportAddsTheCookie() async throws {
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let cookies = PersistentCookieStorage(directory: directory, namespace: "review")
            let stub = StubTransport { [clock] request in
                let url = try #require(request.url)
                if request.httpMethod == "POST" {
                    return HTTPResponse(
                        statusCode: 200, headers: ["Set-Cookie": "sid=\(url.lastPathComponent); Path=/"], url: url)
                }
                let sid = (request.value(forHTTPHeaderField: "Cookie") ?? "").replacingOccurrences(of: "sid=", with: "")
                var response = CacheFixture.item(
                    sid.isEmpty ? "nobody" : sid, clock: clock,
                    headers: ["Cache-Control": "private, max-age=600", "Vary": "Cookie"])
                response.url = url
                return response
            }
            let cache = CacheFixture.cache(clock: clock)
            let client = APIClient(environment: CacheFixture.environment) { configuration in
                configuration.transport = CookieStoringTransport(storage: cookies, base: stub)
                configuration.interceptors = cache.interceptors() + [RetryInterceptor(maximumRetries: 0)]
            }
            _ = try await client.send(Request<HTTPResponse>.raw(.post, "/login/alice"))
            let alice = try await client.send(CacheFixture.getItem())
            _ = try await client.send(Request<HTTPResponse>.raw(.post, "/login/bob"))
            let bob = try await client.response(for: CacheFixture.getItem())
            #expect(alice.name == "alice")
            #expect(bob.value.name == "bob", "bob got \(bob.value.name)'s response, stored with Vary: Cookie")
            #expect(bob.context.cacheOutcome != .hit)
        }
    }
}

extension CachingTests {
    /// A snapshot's age when the device clock moved back after it was saved.
    @Suite struct SnapshotClockSkew {
        let clock = ManualDate()

        private func temporaryDirectory() -> URL {
            FileManager.default.temporaryDirectory.appendingPathComponent("courier-skew-\(UUID().uuidString)")
        }

        @Test func aSnapshotFromAClockThatWasAheadIsNotShownAsNew() async throws {
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = SnapshotStore(directory: directory, now: clock.provider)
            try await store.save(["old"], key: "catalog")
            clock.advance(by: -30 * 86_400)  // the device clock was 30 days ahead, now corrected
            clock.advance(by: 2 * 3600)  // two real hours later
            let loaded = await store.load([String].self, key: "catalog", maxAge: .seconds(3600))
            #expect(loaded == nil, "age reported: \(String(describing: loaded?.age(at: clock.now)))")
        }
    }
}

extension CachingTests {
    /// Two `DiskCacheStorage`s on one directory (an app and its extension): a sign-out removes what
    /// either wrote.
    @Suite struct SharedDiskDirectory {
        let clock = ManualDate()

        private func temporaryDirectory() -> URL {
            FileManager.default.temporaryDirectory.appendingPathComponent("courier-shared-\(UUID().uuidString)")
        }

        private func stored(_ body: String) -> CachedResponse {
            CachedResponse(
                statusCode: 200, headers: ["Cache-Control": "max-age=60", "Content-Type": "application/json"],
                body: Data(body.utf8), url: URL(string: "https://a.test/x"), requestTime: clock.now, responseTime: clock.now,
                varyingRequestHeaders: [:])
        }

        @Test func removingAPartitionRemovesWhatAnotherInstanceWroteToTheDirectory() async {
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let app = DiskCacheStorage(directory: directory)
            let widget = DiskCacheStorage(directory: directory)
            _ = await app.count  // the app's storage indexes the directory
            let key = CacheKey(partition: "alice", url: "https://a.test/me")
            await widget.store(stored(#"{"name":"alice"}"#), for: key)
            await app.removeAll(partition: "alice")  // alice signs out in the app
            let nextLaunch = DiskCacheStorage(directory: directory)
            #expect(await nextLaunch.responses(for: key).isEmpty, "alice's entry outlived her sign-out")
            await app.removeAll()
            let afterRemoveAll = DiskCacheStorage(directory: directory)
            #expect(await afterRemoveAll.count == 0, "removeAll() left another instance's files")
        }
    }
}
