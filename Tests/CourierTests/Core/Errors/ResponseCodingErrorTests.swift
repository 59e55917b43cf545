import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// Issue 17, item 8: a body whose content or transfer coding the transport cannot undo is
    /// ``NetworkError/undecodableResponse(_:)``, never a generic transport error, and is not retried.
    @Suite struct ResponseCodingErrors {
        /// What swift-corelibs-foundation (libcurl 8) reports, measured against a raw socket server:
        /// every case is `URLError.unknown` (-1) with libcurl's message.
        static func linuxError(_ message: String) -> URLError {
            URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: message])
        }

        @Test(arguments: [
            (
                "Unrecognized content encoding type. libcurl understands deflate, gzip, br, zstd content encodings.",
                ResponseCodingFailure.Reason.unsupportedCoding
            ),
            ("Error while processing content unencoding: incorrect header check", .corruptContent),
            ("Unrecognized or bad HTTP Content or Transfer-Encoding", .corruptContent),
            ("Illegal or missing hexadecimal sequence in chunked-encoding", .malformedChunkedFraming),
        ])
        func linuxLibcurlMessagesMapToTheirReason(_ message: String, _ reason: ResponseCodingFailure.Reason) {
            guard case .undecodableResponse(let failure) = NetworkError(Self.linuxError(message)) else {
                Issue.record("not undecodableResponse: \(NetworkError(Self.linuxError(message)))")
                return
            }
            #expect(failure.reason == reason)
            #expect(failure.underlying.code == .unknown)
        }

        @Test(arguments: [URLError.Code.cannotDecodeContentData, .cannotDecodeRawData])
        func appleDecodingCodesAreCorruptContent(_ code: URLError.Code) {
            guard case .undecodableResponse(let failure) = NetworkError(URLError(code)) else {
                Issue.record("not undecodableResponse")
                return
            }
            #expect(failure.reason == .corruptContent)
        }

        @Test func otherUnknownErrorsStayTransportErrors() {
            guard case .transport = NetworkError(Self.linuxError("Failure when receiving data from the peer")) else {
                Issue.record("expected .transport")
                return
            }
            #expect(ResponseCodingFailure(URLError(.networkConnectionLost)) == nil)
        }

        @Test func theClientReportsItOnceWithoutRetrying() async throws {
            let stub = StubTransport { _ in
                throw Self.linuxError(
                    "Unrecognized content encoding type. libcurl understands deflate, gzip, br, zstd content encodings.")
            }
            let client = CoreFixture.client(stub) { $0.interceptors = .standard() }
            let error = await CoreFixture.networkError { try await client.send(Request<Void>.get("/x")) }
            guard case .undecodableResponse(let failure)? = error else {
                Issue.record("expected undecodableResponse, got \(String(describing: error))")
                return
            }
            #expect(failure.reason == .unsupportedCoding)
            #expect(stub.requestCount == 1, "the same bytes would come back: no retry")
            #expect(error?.userMessage == "The server sent something unexpected.")
        }
    }
}
