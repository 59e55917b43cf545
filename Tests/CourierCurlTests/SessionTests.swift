#if canImport(CCurl)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierCurl

/// Cookies per transport, phase timings in metrics events, errors of real failures (items 4, 5, 7).
@Suite("CurlTransport sessions: cookies, timings, real failures")
struct SessionTests {
    struct CookieEcho: Decodable { var cookies: [String: String] }

    @Test("cookies stay in the transport that received them, and a session reset forgets them")
    func cookieIsolation() async throws {
        let (base, _) = try CurlServers.namespace()
        let first = CurlTransport()
        let second = CurlTransport()
        func cookies(_ transport: CurlTransport) async throws -> [String: String] {
            let response = try await transport.send(URLRequest(url: base.appendingPathComponent("cookies")))
            return try JSONDecoder().decode(CookieEcho.self, from: response.data).cookies
        }
        var set = URLComponents(url: base.appendingPathComponent("cookies/set"), resolvingAgainstBaseURL: false)
        set?.queryItems = [URLQueryItem(name: "session", value: "first-secret")]
        _ = try await first.send(URLRequest(url: try #require(set?.url)))
        #expect(try await cookies(first) == ["session": "first-secret"])
        #expect(try await cookies(second).isEmpty, "another transport never sees them")
        // Readable like URLSessionTransport.cookieStorage: the jar, and what a URL would carry.
        #expect(first.storedCookies.map { "\($0.name)=\($0.value)" } == ["session=first-secret"])
        #expect(first.cookies(for: base.appendingPathComponent("cookies")).map(\.name) == ["session"])
        #expect(first.cookies(for: try #require(URL(string: "http://elsewhere.example/cookies"))).isEmpty)
        #expect(second.storedCookies.isEmpty)
        await first.resetSession()
        #expect(try await cookies(first).isEmpty)
        #expect(first.storedCookies.isEmpty)
        #expect(
            try await CurlTransport { $0.httpShouldSetCookies = false }.send(URLRequest(url: try #require(set?.url))).statusCode
                < 400)
    }

    @Test(
        "a response to a request sent before resetSession does not bring the reset session's cookies back",
        .timeLimit(.minutes(1)))
    func lateSetCookieAfterResetIsDropped() async throws {
        let release = DispatchSemaphore(value: 0)
        let heads = Locked<[String]>([])
        let server = try LoopbackSocketServer { connection in
            while let head = connection.readHead() {
                heads.withLock { $0.append(head) }
                if head.hasPrefix("get /login") {
                    _ = release.wait(timeout: .now() + 20)  // held until the test signed out
                    connection.write(
                        "HTTP/1.1 200 OK\r\nSet-Cookie: session=old-secret; Path=/\r\nContent-Length: 0\r\n"
                            + "Connection: close\r\n\r\n")
                    return
                }
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            }
        }
        defer { server.stop() }
        let transport = CurlTransport()
        let login = Task { try await transport.send(URLRequest(url: server.origin.appendingPathComponent("login"))) }
        for _ in 0..<1000 where heads.current.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        await transport.resetSession()  // sign-out while the sign-in is in flight
        release.signal()
        #expect(try await login.value.statusCode == 200)
        #expect(transport.storedCookies.isEmpty)
        _ = try await transport.send(URLRequest(url: server.origin.appendingPathComponent("me")))
        let me = try #require(heads.current.last)
        #expect(me.hasPrefix("get /me"))
        #expect(!me.contains("old-secret"), "the server received: \(me)")
    }

    @Test("metrics events carry libcurl's phase timings, byte counts and the protocol; a reused connection has no connect phase")
    func timingsInMetricsEvents() async throws {
        let (base, _) = try CurlServers.namespace()
        let sink = CapturingMetricsSink()
        let client = APIClient(environment: APIEnvironment(name: "curl", baseURL: base)) {
            $0.transport = CurlTransport()
            $0.interceptors = .standard(metrics: sink)
        }
        let payload = Data(repeating: 7, count: 3000)
        _ = try await client.send(
            Request<Data>(method: .post, path: "/echo", body: .data(payload, contentType: "application/octet-stream")))
        _ = try await client.send(Request<Data>.get("/echo"))
        let events = sink.events
        #expect(events.count == 2)
        let first = try #require(events.first?.taskTimings)
        let second = try #require(events.last?.taskTimings)
        #expect(first.isReusedConnection == false)
        #expect(first.connect != nil && first.domainLookup != nil)
        #expect(first.secureConnection == nil, "plain http has no TLS phase")
        #expect(first.timeToFirstByte != nil && first.total != nil && first.waiting != nil)
        #expect((first.total ?? .zero) >= (first.timeToFirstByte ?? .seconds(1)))
        #expect(first.networkProtocol == "http/1.1")
        #expect(first.requestBodyBytesSent == 3000)
        #expect(first.responseBodyBytesReceived == Int64(events.first?.responseBodyBytes ?? -1))
        #expect((first.requestHeaderBytesSent ?? 0) > 0 && (first.responseHeaderBytesReceived ?? 0) > 0)
        #expect(second.isReusedConnection == true)
        #expect(second.connect == nil && second.domainLookup == nil)
    }

    @Test("a refused connection is URLSession's code, and NetworkError's case")
    func refusedConnection() async throws {
        await #expect {
            _ = try await CurlTransport().send(URLRequest(url: URL(string: "http://127.0.0.1:9/")!))
        } throws: { error in
            (error as? URLError)?.code == .cannotConnectToHost && (error as? URLError)?.curlCode == 7
                && NetworkError(error).kind == .transport
        }
    }

    /// A wall-clock bound: under the parallel passes' load (a helper's build beside a fresh-clone
    /// run) the 1 s idle timeout was seen after 12.8 s.
    @Suite("on a quiet machine") struct OnAQuietMachine {
        @Test("an idle timeout is URLSession's code, and NetworkError's case, about when it is due")
        func idleTimeout() async throws {
            let (base, _) = try CurlServers.namespace()
            var request = URLRequest(
                url: base.appendingPathComponent("slow").appending(queryItems: [URLQueryItem(name: "seconds", value: "30")]))
            request.timeoutInterval = 1
            let clock = ContinuousClock()
            let start = clock.now
            await #expect {
                _ = try await CurlTransport().send(request)
            } throws: { error in
                NetworkError(error).kind == .timedOut && (error as? URLError)?.code == .timedOut
            }
            #expect(clock.now - start < .seconds(10))  // the server answers after 30 s
        }
    }
}
#endif
