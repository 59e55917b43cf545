import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// Thrown errors become `NetworkError` cases (issue 2, item 7).
    @Suite struct ErrorMapping {
        @Test("CancellationError and URLError.cancelled both become .cancelled")
        func cancellation() {
            #expect(NetworkError(CancellationError()).isCancellation)
            #expect(NetworkError(URLError(.cancelled)).isCancellation)
            #expect(!NetworkError(URLError(.timedOut)).isCancellation)
        }

        @Test(
            "a transport that throws either cancellation error gives .cancelled from the client",
            arguments: [CancellationError() as any Error, URLError(.cancelled)])
        func cancellationThroughClient(error: any Error) async throws {
            let stub = StubTransport { _ in throw error }
            let result = await CoreFixture.networkError { try await CoreFixture.client(stub).send(Request<Void>.get("/x")) }
            #expect(result?.isCancellation == true)
        }

        enum Kind: Equatable { case offline, timedOut, invalidRequest, transport, cancelled }

        static func kind(_ error: NetworkError) -> Kind? {
            switch error {
            case .offline: return .offline
            case .timedOut: return .timedOut
            case .invalidRequest: return .invalidRequest
            case .transport: return .transport
            case .cancelled: return .cancelled
            default: return nil
            }
        }

        @Test(
            "URLError codes map by what the user can do",
            arguments: [
                (URLError.Code.notConnectedToInternet, Kind.offline), (.dataNotAllowed, .offline),
                (.internationalRoamingOff, .offline), (.timedOut, .timedOut), (.badURL, .invalidRequest),
                (.unsupportedURL, .transport), (.cannotConnectToHost, .transport), (.networkConnectionLost, .transport),
                (.secureConnectionFailed, .transport), (.cancelled, .cancelled),
            ])
        func urlErrors(code: URLError.Code, expected: Kind) {
            #expect(Self.kind(NetworkError(URLError(code))) == expected)
        }

        /// Courier builds only http(s) URLs: libcurl's "unsupported" for one is a reply that is not
        /// HTTP (HTTP/0.9, a garbage line) — the server's fault, not a bad request. Another scheme
        /// stays a bad request.
        @Test("unsupportedURL for an http(s) URL is a bad server reply; for another scheme a bad request")
        func unsupportedURLByScheme() {
            let http = URLError(.unsupportedURL, userInfo: [NSURLErrorFailingURLErrorKey: URL(string: "http://h/x")!])
            guard case .transport(let error) = NetworkError(http) else {
                Issue.record("expected transport")
                return
            }
            #expect(error.code == .badServerResponse)
            let ftp = URLError(.unsupportedURL, userInfo: [NSURLErrorFailingURLErrorKey: URL(string: "ftp://h/x")!])
            #expect(Self.kind(NetworkError(ftp)) == .invalidRequest)
        }

        @Test("the URLError is kept for logs")
        func keepsUnderlying() {
            guard case .transport(let error) = NetworkError(URLError(.networkConnectionLost)) else {
                Issue.record("expected transport")
                return
            }
            #expect(error.code == .networkConnectionLost)
            guard case .timedOut(let idle) = NetworkError(URLError(.timedOut)) else {
                Issue.record("expected timedOut")
                return
            }
            #expect(idle?.code == .timedOut)
        }

        @Test("a NetworkError passes through unchanged; an unknown error becomes .transport")
        func passThrough() {
            guard case .sessionExpired = NetworkError(NetworkError.sessionExpired) else {
                Issue.record("expected sessionExpired")
                return
            }
            struct Weird: Error {}
            guard case .transport(let error) = NetworkError(Weird()) else {
                Issue.record("expected transport")
                return
            }
            #expect(error.code == .unknown)
        }

        @Test("an interceptor's NetworkError reaches the caller unchanged")
        func interceptorError() async throws {
            struct Refuse: Interceptor {
                func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
                    throw NetworkError.sessionExpired
                }
            }
            let stub = StubTransport(responses: [HTTPResponse]())
            let client = CoreFixture.client(stub) { $0.interceptors = [Refuse()] }
            let error = await CoreFixture.networkError { try await client.send(Request<Void>.get("/x")) }
            guard case .sessionExpired? = error else {
                Issue.record("expected sessionExpired, got \(String(describing: error))")
                return
            }
            #expect(stub.requestCount == 0)
        }

        @Test("every case has a user message and a description; only .cancelled is a cancellation")
        func messages() {
            let failed = FailedResponse(HTTPResponse(statusCode: 500))
            let cases: [NetworkError] = [
                .offline(URLError(.notConnectedToInternet)), .timedOut(nil), .timedOut(URLError(.timedOut)), .cancelled,
                .unauthorized(failed), .sessionExpired, .forbidden(failed), .notFound(failed), .conflict(failed),
                .unprocessable(ValidationProblem(failed)), .rateLimited(retryAfter: .seconds(1), response: failed),
                .server(failed), .client(failed), .rejected(APIProblem(code: "c", message: "m", response: failed)),
                .decoding(
                    DecodingFailure(
                        underlying: EmptyBodyError(), codingPath: "<root>", typeName: "T",
                        response: HTTPResponse(statusCode: 200))),
                .invalidRequest("x"), .transport(URLError(.cannotConnectToHost)), .signedOut,
                .missingInterceptor("AuthInterceptor"), .notCached,
            ]
            for error in cases {
                #expect(!error.userMessage.isEmpty)
                #expect(!error.description.isEmpty)
                #expect(error.isCancellation == (error.description == "cancelled"))
            }
            #expect(NetworkError.timedOut(nil).description == "timed out (deadline)")
            #expect(NetworkError.rateLimited(retryAfter: .seconds(7), response: failed).description.contains("Retry-After: 7s"))
        }
    }
}
