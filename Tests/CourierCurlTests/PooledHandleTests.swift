#if canImport(CCurl)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierCurl
import CourierTesting

/// A pooled easy handle carries nothing of its last call into the next: `curl_easy_reset` in
/// libcurl 7.88 keeps some state (a `CURLOPT_RESOLVE` list, the cookie host of a caller's `Host`
/// field, a pending rewind, buffers kept when a transfer ends on a shared HTTP/2 connection), and
/// each test here failed before CurlTransport stopped reusing or cleared such a handle.
@Suite("Pooled handles")
struct PooledHandleTests {
    /// A call cancelled while its start is queued is recycled without libcurl ever running it. Its
    /// `CURLOPT_RESOLVE` list, freed with the call, stayed in the handle, and the next call on it
    /// (another host, no list of its own) read freed memory: a wrong error (curl 49) or a crash.
    @Test("A resolve list of a call cancelled before it ran does not reach the next call")
    func resolveListOfACancelledCall() async throws {
        let (base, namespace) = try CurlServers.namespace()
        var components = try #require(URLComponents(url: base, resolvingAgainstBaseURL: false))
        components.host = "courier-resolved.test"
        let resolvedBase = try #require(components.url)
        let transport = CurlTransport { $0.resolvedAddresses = ["courier-resolved.test": "127.0.0.1"] }
        func echo(_ base: URL, _ tag: String) -> URLRequest {
            URLRequest(url: base.appendingPathComponent("echo").appending(queryItems: [URLQueryItem(name: "i", value: tag)]))
        }
        let warm = try await transport.send(echo(resolvedBase, "warm"))  // one idle handle afterwards
        #expect(warm.statusCode == 200)
        for round in 0..<5 {
            let holder = try await EngineLockHolder.start(on: transport)
            let before = transport.queuedStarts
            let cancelled = echo(resolvedBase, "cancelled-\(round)")
            let task = Task { try await transport.send(cancelled) }
            try await CurlServers.waitUntil("the call's start queued", limit: .seconds(30)) { transport.queuedStarts > before }
            task.cancel()
            holder.letGo()
            _ = try await Stress.bounded("the cancelled call ended") { await Stress.result { try await task.value } }
            try await holder.waitUntilLetGo()
            let next = echo(base, "next-\(round)")  // a host without a resolve entry, on the recycled handle
            let response = try await Stress.bounded("the next call") { try await transport.send(next) }
            #expect(response.statusCode == 200, "round \(round)")
        }
        let echoes = try await CurlServers.requestCount(namespace, "GET /echo")
        #expect(echoes == 6, "the server counted \(String(describing: echoes))")  // the warm-up and 5 next calls
    }

    struct CookieEcho: Decodable {
        var cookie: String?
        var cookies: [String: String]
    }

    static func setCookie(_ base: URL, _ name: String, _ value: String) throws -> URLRequest {
        var components = try #require(
            URLComponents(url: base.appendingPathComponent("cookies/set"), resolvingAgainstBaseURL: false))
        components.queryItems = [URLQueryItem(name: name, value: value)]
        return URLRequest(url: try #require(components.url))
    }

    /// libcurl keeps the cookie host taken from a caller's `Host` field for the life of the handle
    /// (fixed upstream in 8.20): the next calls' cookies were stored and chosen for that host.
    @Test("A caller's Host field does not become the cookie host of the next call")
    func cookieHostStaysWithItsCall() async throws {
        let (base, _) = try CurlServers.namespace()
        let transport = CurlTransport()
        var virtualHost = URLRequest(url: base.appendingPathComponent("echo"))
        virtualHost.setValue("other.example", forHTTPHeaderField: "Host")
        #expect(try await transport.send(virtualHost).statusCode == 200)
        let set = try await transport.send(try Self.setCookie(base, "session", "b-secret"))
        #expect(set.statusCode < 400)
        let stored = transport.storedCookies.map { "\($0.name)=\($0.value)@\($0.domain)" }
        #expect(stored == ["session=b-secret@127.0.0.1"])
        let echo = try JSONDecoder().decode(
            CookieEcho.self, from: try await transport.send(URLRequest(url: base.appendingPathComponent("cookies"))).data)
        #expect(echo.cookies == ["session": "b-secret"])
    }

    @Test("A cookie stored for a caller's Host field is not sent to the URL's host")
    func cookieOfAVirtualHostIsNotSentElsewhere() async throws {
        let (base, _) = try CurlServers.namespace()
        let transport = CurlTransport()
        var virtualHost = try Self.setCookie(base, "other", "for-other-example-only")
        virtualHost.setValue("other.example", forHTTPHeaderField: "Host")
        _ = try await transport.send(virtualHost)
        #expect(transport.storedCookies.map { "\($0.name)@\($0.domain)" } == ["other@other.example"])
        let echo = try JSONDecoder().decode(
            CookieEcho.self, from: try await transport.send(URLRequest(url: base.appendingPathComponent("cookies"))).data)
        #expect(echo.cookies.isEmpty, "127.0.0.1 was sent: \(echo.cookie ?? "")")
    }

    /// libcurl 7.88 marks an upload for a rewind when its reused connection died before any
    /// answer; when the fresh connect then fails nothing clears the mark, and the next upload on
    /// the handle rewound before its first send: a POST (whose rewind is refused) failed unsent.
    @Test("A failed resend leaves no rewind for the next upload")
    func failedResendLeavesNoRewind() async throws {
        let (base, namespace) = try CurlServers.namespace()
        // Answers the first request (keep-alive), reads the second and closes the connection
        // without an answer and its listening socket: libcurl's reconnect is refused.
        let dying = try LoopbackSocketServer { connection in
            guard let first = connection.readHead(), connection.readBody(of: first) else { return }
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            if let second = connection.readHead() { _ = connection.readBody(of: second) }
            connection.closeListener()
        }
        defer { dying.stop() }
        let transport = CurlTransport {
            $0.httpVersion = .http1
            $0.proxy = .none
        }
        try await Stress.bounded("a failed resend, then a POST", limit: .seconds(60)) {
            let first = try await transport.send(URLRequest(url: dying.origin.appendingPathComponent("first")))
            #expect(first.statusCode == 200)
            var put = URLRequest(url: dying.origin.appendingPathComponent("put"))
            put.httpMethod = "PUT"
            put.httpBody = Data(repeating: 0x41, count: 1000)
            let fixedPut = put
            let putResult = await Stress.result { try await transport.send(fixedPut) }
            #expect(throws: (any Error).self) { try putResult.get() }
            var post = URLRequest(url: base.appendingPathComponent("echo"))
            post.httpMethod = "POST"
            post.httpBody = Data("hello".utf8)
            post.setValue("text/plain", forHTTPHeaderField: "Content-Type")
            let fixedPost = post
            let answer = try await transport.send(fixedPost)
            #expect(answer.statusCode == 200)
        }
        let count = try await CurlServers.requestCount(namespace, "POST /echo")
        #expect(count == 1, "the server counted \(String(describing: count))")
    }

    /// `n` bytes, byte i = i % 251 (the server's `/flow/bytes/{n}`). Whole 251-byte blocks are
    /// appended (memcpy-fast even in a debug build: a per-byte `map` here, redone for every
    /// comparison, was 3 % of the parallel pass's CPU on the cooperative pool).
    static func pattern(_ n: Int) -> Data {
        var data = Data(capacity: n)
        while data.count + patternBlock.count <= n { data.append(patternBlock) }
        data.append(patternBlock.prefix(n - data.count))
        return data
    }

    private static let patternBlock = Data((0..<251).map { UInt8($0) })

    /// One transport over TLS/h2. An anchor stream (a huge body never read: paused) keeps the h2
    /// connection in use, so every other transfer ends in libcurl 7.88's early return from
    /// `multi_done` (which keeps the handle's buffers). Then a mix of calls on the recycled
    /// handles: each gets exactly its own bytes and its own metrics.
    @Test("Calls beside a held HTTP/2 stream get their own bytes and metrics")
    func callsBesideAHeldStream() async throws {
        try await Stress.bounded("calls beside a held stream", limit: .seconds(120)) {
            let tls = try CurlServers.url("COURIER_TLS_URL")
            let ca = URL(fileURLWithPath: try CurlServers.value("COURIER_TLS_CA_FILE"))
            let transport = CurlTransport {
                $0.trustedCertificateAuthorities = ca
                $0.httpMaximumConnectionsPerHost = 1
            }
            let sink = CapturingMetricsSink()
            let client = APIClient(environment: APIEnvironment(name: "tls", baseURL: tls)) {
                $0.transport = transport
                $0.interceptors = .standard(metrics: sink)
            }
            let hello = try await transport.send(URLRequest(url: tls.appendingPathComponent("tls/hello")))
            #expect(String(decoding: hello.data, as: UTF8.self).contains("\"httpVersion\": \"2\""))
            let anchor = try await transport.stream(
                URLRequest(url: tls.appendingPathComponent("tls/bytes/1000000000")), options: StreamingOptions(bufferLimit: 1024))
            #expect(anchor.statusCode == 200)
            // A streamed call that pauses and hits its maxDuration while the connection is shared:
            // it ends in libcurl with bytes held in tempwrite (kept by the early return).
            for round in 0..<3 {
                let paused = try await transport.stream(
                    URLRequest(url: tls.appendingPathComponent("tls/bytes/5000000")),
                    options: StreamingOptions(bufferLimit: 1024, maxDuration: .milliseconds(800)))
                try await Task.sleep(for: .milliseconds(1200))
                let drained = await Stress.result { try await Stress.drain(paused.body) }
                if case .success(let d) = drained {
                    Issue.record("round \(round): paused stream with maxDuration completed: \(d)")
                }
                // Buffered calls of several sizes.
                for n in [0, 1, 1000, 16384, 16385, 70000, 300000] {
                    let r = try await transport.send(URLRequest(url: tls.appendingPathComponent("tls/bytes/\(n)")))
                    #expect(
                        r.statusCode == 200 && r.data == Self.pattern(n),
                        "round \(round) n \(n): status \(r.statusCode), \(r.data.count) bytes, equal: \(r.data == Self.pattern(n))"
                    )
                }
                // Streamed calls read fully.
                for n in [10, 100000, 1000000] {
                    let r = try await transport.stream(
                        URLRequest(url: tls.appendingPathComponent("tls/bytes/\(n)")),
                        options: StreamingOptions(bufferLimit: 8192))
                    var got = Data()
                    for try await chunk in r.body { got.append(chunk) }
                    #expect(
                        got == Self.pattern(n),
                        "round \(round) streamed n \(n): \(got.count) bytes, equal \(got == Self.pattern(n))")
                }
                // HEAD after GET with a body.
                var head = URLRequest(url: tls.appendingPathComponent("tls/bytes/5000"))
                head.httpMethod = "HEAD"
                let h = try await transport.send(head)
                #expect(h.statusCode == 200 && h.data.isEmpty, "HEAD: \(h.statusCode) \(h.data.count)")
                // Redirect returned, never followed.
                var rc = URLComponents(url: tls.appendingPathComponent("tls/redirect"), resolvingAgainstBaseURL: false)!
                rc.queryItems = [URLQueryItem(name: "to", value: tls.appendingPathComponent("tls/bytes/7").absoluteString)]
                let red = try await transport.send(URLRequest(url: rc.url!))
                #expect(red.statusCode == 302 && red.data.isEmpty, "redirect: \(red.statusCode) \(red.data.count)")
                // Metrics: each call's own byte counts.
                for n in [12345, 10, 250000] {
                    _ = try await client.send(Request<Data>.get("/tls/bytes/\(n)"))
                    let t = sink.events.last?.taskTimings
                    #expect(
                        t?.responseBodyBytesReceived == Int64(n),
                        "metrics n \(n): \(String(describing: t?.responseBodyBytesReceived)) reused \(String(describing: t?.isReusedConnection)) proto \(String(describing: t?.networkProtocol))"
                    )
                }
            }
            withExtendedLifetime(anchor) {}
        }
    }

    struct Echo: Decodable {
        var method: String
        var headers: [String: String]
        var bodyLength: Int
        var bodySum: Int
        var http: String
    }

    /// Mixed call kinds over one transport (handles change hands between kinds): each call must
    /// see only its own method, headers, body and response. Returns what differed.
    static func mixedKinds(_ transport: CurlTransport, _ tls: URL, task: Int, rounds: Int) async throws -> [String] {
        var problems: [String] = []
        func echo(_ r: HTTPResponse) throws -> Echo { try JSONDecoder().decode(Echo.self, from: r.data) }
        let echoURL = tls.appendingPathComponent("tls/probe/echo")
        for round in 0..<rounds {
            let tag = "t\(task) r\(round)"
            // gzip decoded
            let g = try await transport.send(URLRequest(url: tls.appendingPathComponent("tls/probe/gzip/3000")))
            if g.data != Self.pattern(3000) { problems.append("\(tag) gzip: \(g.statusCode) \(g.data.count)") }
            // POST with body
            var post = URLRequest(url: echoURL)
            post.httpMethod = "POST"
            post.httpBody = Data(repeating: 7, count: 5000)
            post.setValue("application/x-probe", forHTTPHeaderField: "Content-Type")
            let p = try echo(try await transport.send(post))
            if p.method != "POST" || p.bodyLength != 5000 || p.headers["content-type"] != "application/x-probe"
                || p.headers["expect"] != nil
            {
                problems.append("\(tag) POST: \(p)")
            }
            // Ranged with caller Accept-Encoding
            var ranged = URLRequest(url: tls.appendingPathComponent("tls/probe/range/100000"))
            ranged.setValue("bytes=10-19", forHTTPHeaderField: "Range")
            ranged.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            let rr = try await transport.send(ranged)
            if rr.statusCode != 206 || rr.data != Data((10..<20).map { UInt8($0 % 251) }) {
                problems.append("\(tag) range: \(rr.statusCode) \(rr.data.count)")
            }
            // GET after: no Range, libcurl's Accept-Encoding, no body headers
            let e = try echo(try await transport.send(URLRequest(url: echoURL)))
            if e.method != "GET" || e.bodyLength != 0 || e.headers["range"] != nil || e.headers["content-type"] != nil
                || e.headers["content-length"] != nil || (e.headers["accept-encoding"] ?? "").contains("identity")
                || e.headers["accept-encoding"] == nil
            {
                problems.append("\(tag) GET after range/POST: \(e)")
            }
            // Full after ranged
            let full = try await transport.send(URLRequest(url: tls.appendingPathComponent("tls/probe/range/1000")))
            if full.statusCode != 200 || full.data != Self.pattern(1000) {
                problems.append("\(tag) full: \(full.statusCode) \(full.data.count)")
            }
            // PUT with a stream body
            var put = URLRequest(url: echoURL)
            put.httpMethod = "PUT"
            put.httpBodyStream = InputStream(data: Data(repeating: 3, count: 70000))
            put.setValue("70000", forHTTPHeaderField: "Content-Length")
            let u = try echo(try await transport.send(put))
            if u.method != "PUT" || u.bodyLength != 70000 || u.bodySum != (3 * 70000) % 65521 {
                problems.append("\(tag) PUT stream: \(u)")
            }
            // 304, 204
            for code in [304, 204] {
                let st = try await transport.send(URLRequest(url: tls.appendingPathComponent("tls/probe/status/\(code)")))
                if st.statusCode != code || !st.data.isEmpty {
                    problems.append("\(tag) \(code): \(st.statusCode) \(st.data.count)")
                }
            }
            // DELETE then HEAD then bodiless POST
            var del = URLRequest(url: echoURL)
            del.httpMethod = "DELETE"
            let d = try echo(try await transport.send(del))
            if d.method != "DELETE" || d.bodyLength != 0 { problems.append("\(tag) DELETE: \(d)") }
            var head = URLRequest(url: echoURL)
            head.httpMethod = "HEAD"
            let h = try await transport.send(head)
            if h.statusCode != 200 || !h.data.isEmpty { problems.append("\(tag) HEAD: \(h.statusCode) \(h.data.count)") }
            var empty = URLRequest(url: echoURL)
            empty.httpMethod = "POST"
            let b = try echo(try await transport.send(empty))
            if b.method != "POST" || b.bodyLength != 0 { problems.append("\(tag) bodiless POST: \(b)") }
            // streamed gzip, read fully
            let sg = try await transport.stream(
                URLRequest(url: tls.appendingPathComponent("tls/probe/gzip/200000")), options: StreamingOptions(bufferLimit: 4096)
            )
            var got = Data()
            for try await chunk in sg.body { got.append(chunk) }
            if got != Self.pattern(200000) { problems.append("\(tag) streamed gzip: \(got.count)") }
        }
        return problems
    }

    @Test("Call kinds that share handles each see only their own request and response", arguments: ["h2", "http1"])
    func mixedCallKinds(_ version: String) async throws {
        try await Stress.bounded("mixed call kinds", limit: .seconds(120)) {
            let tls = try CurlServers.url("COURIER_TLS_URL")
            let ca = URL(fileURLWithPath: try CurlServers.value("COURIER_TLS_CA_FILE"))
            let transport = CurlTransport {
                $0.trustedCertificateAuthorities = ca
                if version == "http1" { $0.httpVersion = .http1 } else { $0.httpMaximumConnectionsPerHost = 1 }
            }
            // Over HTTP/2 a held stream keeps the connection shared by every other call.
            let anchor =
                version == "h2"
                ? try await transport.stream(
                    URLRequest(url: tls.appendingPathComponent("tls/bytes/1000000000")),
                    options: StreamingOptions(bufferLimit: 1024))
                : nil
            let problems = try await withThrowingTaskGroup(of: [String].self) { group in
                for task in 0..<4 { group.addTask { try await Self.mixedKinds(transport, tls, task: task, rounds: 4) } }
                var all: [String] = []
                for try await found in group { all += found }
                return all
            }
            #expect(problems.isEmpty, "\(problems.count) problems: \(problems.prefix(8))")
            withExtendedLifetime(anchor) {}
        }
    }
}
#endif
