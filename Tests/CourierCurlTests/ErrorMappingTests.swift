#if canImport(CCurl)
import CCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
@testable import CourierCurl
import CourierTesting

/// The CURLcode → URLError table (issue 12, item 7): the code URLSession reports for the same
/// event, so NetworkError, retries and the UI do not depend on the transport.
@Suite("CurlTransport error mapping by CURLcode")
struct ErrorMappingTests {
    @Test(
        "each CURLcode maps to URLSession's code for the same event",
        arguments: [
            (CURLE_COULDNT_RESOLVE_HOST, URLError.Code.cannotFindHost),
            (CURLE_COULDNT_RESOLVE_PROXY, .cannotFindHost),
            (CURLE_COULDNT_CONNECT, .cannotConnectToHost),
            (CURLE_OPERATION_TIMEDOUT, .timedOut),
            (CURLE_PARTIAL_FILE, .networkConnectionLost),
            (CURLE_GOT_NOTHING, .networkConnectionLost),
            (CURLE_SEND_ERROR, .networkConnectionLost),
            (CURLE_RECV_ERROR, .networkConnectionLost),
            (CURLE_HTTP2, .networkConnectionLost),
            (CURLE_HTTP2_STREAM, .networkConnectionLost),
            (CURLE_SSL_CONNECT_ERROR, .secureConnectionFailed),
            (CURLE_SSL_CIPHER, .secureConnectionFailed),
            (CURLE_PEER_FAILED_VERIFICATION, .serverCertificateUntrusted),
            (CURLE_SSL_PINNEDPUBKEYNOTMATCH, .serverCertificateUntrusted),
            (CURLE_SSL_CERTPROBLEM, .clientCertificateRejected),
            (CURLE_ABORTED_BY_CALLBACK, .cancelled),
            (CURLE_READ_ERROR, .requestBodyStreamExhausted),
            (CURLE_SEND_FAIL_REWIND, .requestBodyStreamExhausted),
            (CURLE_UNSUPPORTED_PROTOCOL, .unsupportedURL),
            (CURLE_URL_MALFORMAT, .badURL),
            (CURLE_TOO_MANY_REDIRECTS, .httpTooManyRedirects),
            (CURLE_WEIRD_SERVER_REPLY, .badServerResponse),
            (CURLE_FILESIZE_EXCEEDED, .dataLengthExceedsMaximum),
            (CURLE_OUT_OF_MEMORY, .unknown),
        ])
    func table(_ code: CURLcode, _ expected: URLError.Code) {
        #expect(CurlErrorMapping.map(code).0 == expected)
    }

    @Test("the mapped codes become the same NetworkError cases as URLSession's")
    func networkErrorCases() {
        func kind(_ code: CURLcode) -> NetworkError.Kind {
            NetworkError(URLError(CurlErrorMapping.map(code).0)).kind
        }
        #expect(kind(CURLE_OPERATION_TIMEDOUT) == .timedOut)
        #expect(kind(CURLE_ABORTED_BY_CALLBACK) == .cancelled)
        #expect(kind(CURLE_COULDNT_CONNECT) == .transport)
        #expect(kind(CURLE_URL_MALFORMAT) == .invalidRequest)
    }

    @Test("certificate verification results pick Apple's certificate codes")
    func certificateCodes() {
        func code(_ verify: Int) -> URLError.Code {
            CurlErrorMapping.map(CURLE_PEER_FAILED_VERIFICATION, facts: .init(sslVerifyResult: verify)).0
        }
        #expect(code(10) == .serverCertificateHasBadDate)  // X509_V_ERR_CERT_HAS_EXPIRED
        #expect(code(9) == .serverCertificateNotYetValid)  // X509_V_ERR_CERT_NOT_YET_VALID
        #expect(code(18) == .serverCertificateHasUnknownRoot)  // X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
        #expect(code(20) == .serverCertificateHasUnknownRoot)  // X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
        #expect(code(62) == .serverCertificateUntrusted)  // X509_V_ERR_HOSTNAME_MISMATCH
    }

    @Test("one CURLcode, two events: protocol state tells them apart, never message text")
    func sharedCodes() {
        let chunkedParse = CurlErrorMapping.map(CURLE_RECV_ERROR, facts: .init(osErrno: 0, isChunked: true))
        #expect(chunkedParse.1 == .malformedChunkedFraming)
        let reset = CurlErrorMapping.map(CURLE_RECV_ERROR, facts: .init(osErrno: Int(ECONNRESET), isChunked: true))
        #expect(reset.0 == .networkConnectionLost && reset.1 == nil)
        let unknownCoding = CurlErrorMapping.map(CURLE_BAD_CONTENT_ENCODING, facts: .init(contentCodings: ["x-unknown"]))
        #expect(unknownCoding.1 == .unsupportedCoding)
        let corrupt = CurlErrorMapping.map(CURLE_BAD_CONTENT_ENCODING, facts: .init(contentCodings: ["gzip"]))
        #expect(corrupt.1 == .corruptContent)
        // libcurl reports an unknown transfer coding as a content coding: the fields tell.
        let unknownTransfer = CurlErrorMapping.map(
            CURLE_BAD_CONTENT_ENCODING, facts: .init(isChunked: true, transferCodings: ["x-unknown"]))
        #expect(unknownTransfer.0 == .cannotDecodeRawData && unknownTransfer.1 == .unsupportedTransferCoding)
        let gzipTransfer = CurlErrorMapping.map(CURLE_BAD_CONTENT_ENCODING, facts: .init(transferCodings: ["gzip"]))
        #expect(gzipTransfer.1 == .corruptContent)
        let streamFailed = CurlErrorMapping.map(CURLE_ABORTED_BY_CALLBACK, facts: .init(uploadFailed: true))
        #expect(streamFailed.0 == .requestBodyStreamExhausted)
        // A write error while libcurl decodes a coded body: its decoder refused bytes after the
        // first gzip member. Without decoding (or without a coding) it stays unexplained.
        var decoding = CurlErrorMapping.Facts(contentCodings: ["gzip"])
        decoding.libcurlDecodes = true
        let afterMember = CurlErrorMapping.map(CURLE_WRITE_ERROR, facts: decoding)
        #expect(afterMember.0 == .cannotDecodeContentData && afterMember.1 == .corruptContent)
        let notDecoding = CurlErrorMapping.map(CURLE_WRITE_ERROR, facts: .init(contentCodings: ["gzip"]))
        #expect(notDecoding.0 == .unknown && notDecoding.1 == nil)
        var uncoded = CurlErrorMapping.Facts()
        uncoded.libcurlDecodes = true
        #expect(CurlErrorMapping.map(CURLE_WRITE_ERROR, facts: uncoded).1 == nil)
    }

    @Test("only a buffered GET or HEAD whose gzip or deflate body libcurl refused after a member is asked again to inflate")
    func asksAgainToInflate() {
        let refused = URLError(.cannotDecodeContentData, userInfo: [CurlErrorMapping.inflatableKey: true])
        let corrupt = URLError(.cannotDecodeContentData)
        func request(_ method: String) -> URLRequest {
            var request = URLRequest(url: URL(string: "http://example.test/")!)
            request.httpMethod = method
            return request
        }
        #expect(CurlTransport.asksAgainToInflate(request("GET"), .buffered(limit: nil), after: refused))
        #expect(CurlTransport.asksAgainToInflate(request("HEAD"), .buffered(limit: 10), after: refused))
        #expect(!CurlTransport.asksAgainToInflate(request("POST"), .buffered(limit: nil), after: refused))
        #expect(!CurlTransport.asksAgainToInflate(request("GET"), .streamed(limit: 1 << 20), after: refused))
        #expect(!CurlTransport.asksAgainToInflate(request("GET"), .buffered(limit: nil), after: corrupt))
    }

    @Test("a body inflated by Courier after libcurl refused it is bounded by the body limit")
    func inflatedIsBounded() async throws {
        // Three gzip members of "first member\n", "second member\n", "third member\n" (40 bytes decoded).
        let members = Data(
            base64Encoded:
                "H4sIAAAAAAACA0vLLCouUchNzU1KLeICAKf0hQoNAAAAH4sIAAAAAAACAytOTc7PS1HITc1NSi3iAgA2GEsODgAAAB+LCAAAAAAAAgMrycgsSlHITc1NSi3iAgCZwa6LDQAAAA=="
        )!
        let response = HTTPResponse(
            statusCode: 200, headers: ["Content-Encoding": "gzip"], body: members, url: URL(string: "http://example.test/"))
        let whole = try await CurlTransport.inflated(response, limit: 40)
        #expect(try await whole.body.collect(upTo: 100) == Data("first member\nsecond member\nthird member\n".utf8))
        do {
            let cut = try await CurlTransport.inflated(response, limit: 39)
            Issue.record("inflated past the limit: \(try await cut.body.collect(upTo: 100).count) bytes")
        } catch let error as NetworkError {
            guard case .responseTooLarge(let limit) = error else {
                Issue.record("expected responseTooLarge, got \(error)")
                return
            }
            #expect(limit == 39)
        }
    }

    @Test("a head over libcurl's limits is cannotParseResponse; a failure before the head otherwise is not")
    func oversizedHead() {
        // A field line over 100 KiB: libcurl refuses to grow its header buffer.
        #expect(CurlErrorMapping.map(CURLE_OUT_OF_MEMORY, facts: .init(receivedHead: false)).0 == .cannotParseResponse)
        // A section over 300 KiB: CURLE_RECV_ERROR after more than 200 KiB of header lines.
        let section = CurlErrorMapping.map(CURLE_RECV_ERROR, facts: .init(receivedHead: false, headerBytes: 307_281))
        #expect(section.0 == .cannotParseResponse)
        // The same code before the head from a reset, or after a few header bytes (a TLS read
        // failure): a lost connection, which a retry may repeat.
        let reset = CurlErrorMapping.map(
            CURLE_RECV_ERROR, facts: .init(osErrno: Int(ECONNRESET), receivedHead: false, headerBytes: 307_281))
        #expect(reset.0 == .networkConnectionLost)
        let early = CurlErrorMapping.map(CURLE_RECV_ERROR, facts: .init(receivedHead: false, headerBytes: 120))
        #expect(early.0 == .networkConnectionLost)
        // Out of memory once the head arrived (libcurl's pause buffer): not a head failure.
        #expect(CurlErrorMapping.map(CURLE_OUT_OF_MEMORY, facts: .init(receivedHead: true)).0 == .unknown)
    }

    @Test("a resend Courier stopped (aborted second attempt, refused rewind) is a lost connection")
    func refusedResend() {
        #expect(CurlErrorMapping.map(CURLE_ABORTED_BY_CALLBACK, facts: .init(resendRefused: true)).0 == .networkConnectionLost)
        #expect(CurlErrorMapping.map(CURLE_SEND_FAIL_REWIND, facts: .init(resendRefused: true)).0 == .networkConnectionLost)
        #expect(CurlErrorMapping.map(CURLE_ABORTED_BY_CALLBACK).0 == .cancelled)
    }

    @Test("a failed connect or lookup after the request went out (libcurl's resend) is a lost connection")
    func failedReconnectAfterTheRequestWentOut() {
        for code in [CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_PROXY] {
            #expect(CurlErrorMapping.map(code, facts: .init(requestSent: true)).0 == .networkConnectionLost)
        }
        #expect(CurlErrorMapping.map(CURLE_COULDNT_CONNECT).0 == .cannotConnectToHost)
    }

    /// libcurl sends a request again on a fresh connection when its reused one dies after the
    /// request went out and before any answer; when that connect is refused, the request had
    /// reached the server all the same. Reported as `cannotConnectToHost` (a failure that proves
    /// nothing was sent), the retry step sent the POST, stored by the server, a second time.
    @Test("A POST whose reused connection died after it went out is not sent again when the reconnect is refused")
    func aPostWhoseReconnectIsRefusedIsNotSentAgain() async throws {
        let posts = LockedCounter()
        // Answers GETs (keep-alive); takes the first POST, then closes its listening socket and
        // the connection without an answer; answers later POSTs with 201.
        let server = try LoopbackSocketServer { connection in
            while let head = connection.readHead(), connection.readBody(of: head) {
                guard head.hasPrefix("post ") else {
                    connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                    continue
                }
                guard posts.increment() > 1 else {
                    connection.closeListener()
                    return
                }
                connection.write("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
            }
        }
        defer { server.stop() }
        // The retry's wait (no real time) is when the server listens again.
        let clock = HookedClock { try? server.reopen() }
        let client = APIClient(environment: APIEnvironment(name: "dying", baseURL: server.origin)) {
            $0.transport = CurlTransport {
                $0.httpVersion = .http1
                $0.proxy = .none
            }
            $0.interceptors = .standard(retry: RetryInterceptor(clock: clock, budget: nil, circuitBreaker: nil))
        }
        let outcome = try await Stress.bounded("a GET, then a POST on its connection", limit: .seconds(60)) {
            _ = try await client.send(Request<Data>.get("/warm"))
            return await Stress.result {
                try await client.send(
                    Request<Data>(method: .post, path: "/orders", body: .data(Data("{}".utf8), contentType: "application/json")))
            }
        }
        #expect(posts.value == 1, "the server took the POST \(posts.value) times")
        #expect(clock.base.sleeps.isEmpty)
        #expect(throws: (any Error).self) { try outcome.get() }
    }
}

/// A ``TestClock`` that runs `beforeSleep` before each wait.
private struct HookedClock: Clock {
    let base = TestClock()
    let beforeSleep: @Sendable () -> Void

    var now: TestClock.Instant { base.now }
    var minimumResolution: Duration { base.minimumResolution }

    func sleep(until deadline: TestClock.Instant, tolerance: Duration?) async throws {
        beforeSleep()
        try await base.sleep(until: deadline, tolerance: tolerance)
    }
}
#endif
