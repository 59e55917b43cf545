#if canImport(CCurl)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierCurl

/// A caller's `Expect: 100-continue` answered by `417 Expectation Failed` (RFC 9110 §10.1.1) on a
/// kept-alive HTTP/1.1 connection: the call ends with the 417, and the request is not sent again
/// and again. libcurl 7.88 resends such a request with the caller's field each time, so it got a
/// 417 each time: a server counted 5,689 `PUT`s in 0.6 s before libcurl's header cap stopped it.
@Suite("Expect: 100-continue answered by 417")
struct ExpectationTests {
    /// Answers a request carrying `Expect: 100-continue` with 417 without reading its body and
    /// keeps the connection; any other request gets 200 "ok".
    static func rejectingServer() throws -> LoopbackSocketServer {
        try LoopbackSocketServer { connection in
            while let head = connection.readHead() {
                if head.contains("\r\nexpect: 100-continue") {
                    connection.write("HTTP/1.1 417 Expectation Failed\r\nContent-Length: 0\r\n\r\n")
                    continue
                }
                guard connection.readBody(of: head) else { return }
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            }
        }
    }

    static func upload(_ method: String, to server: LoopbackSocketServer) -> URLRequest {
        var request = URLRequest(url: server.origin.appendingPathComponent("upload"))
        request.httpMethod = method
        request.httpBody = Data(repeating: 0x42, count: 4000)
        request.setValue("100-continue", forHTTPHeaderField: "Expect")
        return request
    }

    @Test("CurlTransport returns the 417 and sends the request once", arguments: ["POST", "PUT", "PATCH"])
    func curlReturnsTheAnswer(_ method: String) async throws {
        let server = try Self.rejectingServer()
        defer { server.stop() }
        let transport = CurlTransport {
            $0.httpVersion = .http1
            $0.proxy = .none
        }
        let request = Self.upload(method, to: server)
        let response = try await Stress.bounded("\(method) with Expect", limit: .seconds(20)) {
            try await transport.send(request)
        }
        #expect(response.statusCode == 417)
        #expect(server.requestCount == 1, "the server counted \(server.requestCount) requests")
        // The connection still serves the next call, which carries no expectation.
        var next = request
        next.setValue(nil, forHTTPHeaderField: "Expect")
        let fixed = next
        let answer = try await Stress.bounded("the next call", limit: .seconds(20)) { try await transport.send(fixed) }
        #expect(answer.statusCode == 200 && answer.data == Data("ok".utf8))
        #expect(server.requestCount == 2)
    }

    @Test("A streamed call gets the 417 as its head and an empty body")
    func curlStreamedCall() async throws {
        let server = try Self.rejectingServer()
        defer { server.stop() }
        let transport = CurlTransport {
            $0.httpVersion = .http1
            $0.proxy = .none
        }
        let request = Self.upload("PUT", to: server)
        let bytes = try await Stress.bounded("streamed PUT with Expect", limit: .seconds(20)) {
            let response = try await transport.stream(request, options: StreamingOptions(bufferLimit: 4096))
            #expect(response.statusCode == 417)
            return try await Stress.drain(response.body).count
        }
        #expect(bytes == 0)
        #expect(server.requestCount == 1, "the server counted \(server.requestCount) requests")
    }

    /// FoundationNetworking (libcurl inside, its own options) repeats the request once: the
    /// second 417 ends the call. Bounded, and the answer is the same as CurlTransport's.
    @Test("URLSessionTransport returns the 417 after at most one resend", arguments: ["POST", "PUT"])
    func urlSessionReturnsTheAnswer(_ method: String) async throws {
        let server = try Self.rejectingServer()
        defer { server.stop() }
        let transport = URLSessionTransport()
        let request = Self.upload(method, to: server)
        let response = try await Stress.bounded("\(method) with Expect", limit: .seconds(20)) {
            try await transport.send(request)
        }
        #expect(response.statusCode == 417)
        #expect((1...2).contains(server.requestCount), "the server counted \(server.requestCount) requests")
    }
}
#endif
